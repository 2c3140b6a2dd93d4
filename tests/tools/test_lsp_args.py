"""lsp: one flat argument object, checked per action before any server starts."""

from __future__ import annotations


async def test_a_missing_field_names_the_action_and_what_it_needs(runtime):
    run = await runtime.create_run()
    hover = await run.call("lsp", {"action": "hover", "line": 3, "symbol": "x"})
    assert hover.code == "invalid_arguments"
    assert hover.error["message"] == "lsp hover needs `file`: the file the symbol is in."
    fix = await run.call("lsp", {"action": "code_actions", "file": "a.py"})
    assert fix.error["message"] == "lsp code_actions needs `line`: the 1-based line to fix."
    outline = await run.call("lsp", {"action": "symbols"})
    assert outline.error["message"] == ("lsp symbols needs `file`: a file for its outline, or "
                                        "`query` to search the workspace.")


async def test_a_missing_symbol_is_its_own_code_and_says_where_to_look(runtime, root):
    (root / "a.py").write_text("x = 1\n")
    run = await runtime.create_run()
    result = await run.call("lsp", {"action": "definition", "file": "a.py", "line": 1})
    assert result.code == "missing_symbol"
    assert result.error["message"].startswith("definition needs `symbol`: a name that appears "
                                              "on line 1")


async def test_names_and_name_searches_are_bounded(runtime, root):
    (root / "a.py").write_text("x = 1\n")
    run = await runtime.create_run()
    too_long = "n" * 1_001
    for tool, args, field in [
        ("lsp", {"action": "symbols", "query": too_long}, "query"),
        ("lsp", {"action": "definition", "file": "a.py", "line": 1, "symbol": too_long},
         "symbol"),
        ("lsp_rename", {"file": "a.py", "line": 1, "symbol": "x", "new_name": too_long},
         "new_name"),
    ]:
        result = await run.call(tool, args)
        assert result.code == "invalid_arguments", result.text
        assert f"`{field}`" in result.error["message"] and "1000" in result.error["message"]
