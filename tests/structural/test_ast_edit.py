"""ast_edit stages, resolve accepts or discards: all or nothing, never stale, per run."""

from __future__ import annotations

import os

import pytest

from jupyter_agent_tools.files import atomic

FOUR = {f"pkg/m{i}.py": f"import logging\n\nprint('start {i}')\nx = {i}\nprint(x)\n"
        for i in range(1, 5)}


async def stage_four(run, files) -> dict:
    files(FOUR)
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "logging.info($A)",
                                      "path": "pkg", "language": "python"})
    assert res.ok, res.text
    return res.data


async def test_rewrite_is_staged_then_accepted(run, files, root):
    files(FOUR)
    async with run.events.subscribe() as events:
        res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "logging.info($A)",
                                          "path": "pkg", "language": "python"})
        assert res.ok, res.text
        assert res.text.startswith(
            '(proposed) 8 replacements in 4 files … call resolve with edit_id "edit_1"')
        assert res.data["edit_id"] == "edit_1" and res.data["replacements"] == 8
        assert res.data["files"] == {f"pkg/m{i}.py": 2 for i in range(1, 5)}
        assert "-print(x)\n+logging.info(x)\n" in res.data["diff"]
        assert any(b["type"] == "diff" for b in res.blocks)
        # Nothing written yet.
        assert (root / "pkg/m1.py").read_text() == FOUR["pkg/m1.py"]
        done = await run.call("resolve", {"edit_id": "edit_1", "action": "accept"})
        assert done.ok, done.text
        assert done.data["status"] == "accepted"
        seen = []
        while not events.empty():
            seen.append(events.get_nowait())
    assert (root / "pkg/m3.py").read_text() == (
        "import logging\n\nlogging.info('start 3')\nx = 3\nlogging.info(x)\n")
    staged = [e for e in seen if e["type"] == "edit_staged"]
    resolved = [e for e in seen if e["type"] == "edit_resolved"]
    assert staged[0]["edit_id"] == "edit_1" and staged[0]["run_id"] == run.id
    assert staged[0]["counts"]["pkg/m2.py"] == 2
    assert resolved[0]["action"] == "accepted" and len(resolved[0]["files"]) == 4
    # An edit resolves once.
    again = await run.call("resolve", {"edit_id": "edit_1", "action": "accept"})
    assert again.code == "unknown_edit" and "already resolved" in again.error["message"]


async def test_accept_reports_written_files_to_the_wrappers(run, files, root):
    data = await stage_four(run, files)
    seen = []

    async def spy(ctx, args, call_next):
        result = await call_next()
        seen.extend(ctx.written)
        return result

    run.runtime.wrappers().append(spy)
    try:
        await run.call("resolve", {"edit_id": data["edit_id"], "action": "accept"})
    finally:
        run.runtime.wrappers().remove(spy)
    assert sorted(seen) == sorted(root / name for name in FOUR)


async def test_stale_file_rejects_the_whole_edit(run, files, root):
    data = await stage_four(run, files)
    (root / "pkg/m2.py").write_text(FOUR["pkg/m2.py"] + "y = 2\n")
    res = await run.call("resolve", {"edit_id": data["edit_id"], "action": "accept"})
    assert res.code == "stale_edit" and "pkg/m2.py" in res.error["message"]
    assert res.data["stale_files"] == ["pkg/m2.py"]
    assert (root / "pkg/m1.py").read_text() == FOUR["pkg/m1.py"]  # nothing written


async def test_a_failing_third_write_restores_every_file(run, files, root, monkeypatch):
    data = await stage_four(run, files)
    third = root / "pkg/m3.py"
    real_replace = os.replace

    def failing_replace(src, dst, **folder_fds):  # a disk failure we cannot cause as root
        if dst == third.name:  # the writer renames relative to the folder's descriptor
            # as os.replace fails: the temporary file first, the target second
            raise OSError(28, "No space left on device", src, None, dst)
        return real_replace(src, dst, **folder_fds)

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    res = await run.call("resolve", {"edit_id": data["edit_id"], "action": "accept"})
    monkeypatch.undo()
    assert res.code == "failed" and "no file was changed" in res.error["message"]
    assert "pkg/m3.py" in res.error["message"] and ".tmp" not in res.error["message"]
    for name, text in FOUR.items():
        assert (root / name).read_text() == text
    assert not [p for p in (root / "pkg").iterdir() if p.name.endswith(".tmp")]
    # The edit is still staged: once the disk is fine, it can be accepted.
    res = await run.call("resolve", {"edit_id": data["edit_id"], "action": "accept"})
    assert res.ok and "logging.info(x)" in third.read_text()


async def test_discard_writes_nothing(run, files, root):
    data = await stage_four(run, files)
    res = await run.call("resolve", {"edit_id": data["edit_id"], "action": "discard"})
    assert res.ok and res.data["status"] == "discarded"
    assert (root / "pkg/m4.py").read_text() == FOUR["pkg/m4.py"]


async def test_another_run_cannot_resolve_your_edit(run, files, parser_runtime):
    data = await stage_four(run, files)
    other = await parser_runtime.create_run()
    res = await other.call("resolve", {"edit_id": data["edit_id"], "action": "accept"})
    assert res.code == "unknown_edit"
    res = await run.call("resolve", {"edit_id": "edit_99", "action": "discard"})
    assert res.code == "unknown_edit"


async def test_multi_line_captures_keep_their_shape(run, files, root):
    files({"w.py": (
        "def f():\n"
        "    if ready:\n"
        "        call(a,\n"
        "             b)\n"
    )})
    res = await run.call("ast_edit", {"pattern": "call($$$ARGS)",
                                      "rewrite": "wrapped(\n    $$$ARGS,\n)", "path": "w.py"})
    assert res.ok, res.text
    await run.call("resolve", {"edit_id": res.data["edit_id"], "action": "accept"})
    assert (root / "w.py").read_text() == (
        "def f():\n"
        "    if ready:\n"
        "        wrapped(\n"
        "            a,\n"
        "                 b,\n"
        "        )\n"
    )


async def test_nested_matches_rewrite_the_outermost(run, files, root):
    files({"n.py": "print(print(1))\n"})
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "show($A)",
                                      "path": "n.py"})
    assert res.data["replacements"] == 1
    await run.call("resolve", {"edit_id": res.data["edit_id"], "action": "accept"})
    assert (root / "n.py").read_text() == "show(print(1))\n"


async def test_no_match_stages_nothing(run, files):
    files({"a.py": "x = 1\n"})
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "p($A)", "path": "a.py"})
    assert res.ok and res.data["edit_id"] is None and "nothing was staged" in res.text


@pytest.mark.parametrize("surface", ["plan", "readonly"])
async def test_write_tier_tools_are_absent_below_full(parser_runtime, surface):
    run = await parser_runtime.create_run(surface=surface)
    res = await run.call("ast_edit", {"pattern": "x", "rewrite": "y", "language": "python"})
    assert res.code == "unknown_tool"


LOGS = "import log\n\nlog.info('a', 1)\nif ready:\n    log.info('b')\n"


async def test_a_rewrite_may_only_use_what_the_pattern_binds(run, files, root):
    files({"logs.py": LOGS})
    res = await run.call("ast_edit", {"pattern": "log.info($$$A)", "rewrite": "log.info($$$B, $Z)",
                                      "path": "logs.py"})
    assert res.code == "invalid_arguments"
    assert "$$$B, $Z, which the pattern does not bind (it binds $A)" in res.error["message"]
    assert res.data["unbound"] == ["$$$B", "$Z"]
    res = await run.call("ast_edit", {"pattern": "log.info($_, $$$)", "rewrite": "log.debug($_)",
                                      "path": "logs.py"})
    assert res.code == "invalid_arguments" and "$_" in res.error["message"]
    assert run.resources["parser"].edits.list() == []
    assert (root / "logs.py").read_text() == LOGS


async def test_a_rewrite_that_breaks_the_syntax_stages_nothing(run, files, root):
    files({"ok.py": "x = 1\n", "logs.py": LOGS})
    res = await run.call("ast_edit", {"pattern": "log.info($$$A)", "rewrite": "log.debug(($$$A",
                                      "path": ".", "language": "python"})
    assert res.code == "invalid_arguments", res.text
    assert "breaks the python syntax of logs.py at line 3" in res.error["message"]
    (broken,) = res.data["broken_files"]
    assert broken["file"] == "logs.py" and broken["syntax_errors_before"] == 0
    assert broken["syntax_errors_after"] > 0
    assert run.resources["parser"].edits.list() == []
    assert (root / "logs.py").read_text() == LOGS


async def test_a_file_already_broken_is_rewritten_if_no_error_is_added(run, files, root):
    files({"half.py": "log.info('a')\ndef broken(:\n"})
    res = await run.call("ast_edit", {"pattern": "log.info($$$A)", "rewrite": "log.debug($$$A)",
                                      "path": "half.py"})
    assert res.ok, res.text
    assert "+log.debug('a')" in res.data["diff"]


async def test_patterns_and_rewrites_have_size_limits(run, files, root):
    files({"a.py": "print(1)\n"})
    res = await run.call("ast_grep", {"pattern": "x" * 2_000_000, "path": "a.py"})
    assert res.code == "invalid_arguments"
    assert "over the 20000-character limit (c.ParserProvider.max_pattern_chars)" in res.error[
        "message"]
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "y" * 100_001,
                                      "path": "a.py"})
    assert res.code == "invalid_arguments" and "max_rewrite_chars" in res.error["message"]


async def test_a_dart_call_chain_is_rewritten_whole(run, files, root):
    files({"lib/p.dart": "void main() {\n  widget.controller.dispose();\n  bar(timer.dispose());\n}\n"})
    res = await run.call("ast_edit", {"pattern": "$X.dispose()", "rewrite": "$X.close()",
                                      "path": "lib/p.dart"})
    assert res.ok and res.data["replacements"] == 2, res.text
    await run.call("resolve", {"edit_id": res.data["edit_id"], "action": "accept"})
    assert (root / "lib/p.dart").read_text() == (
        "void main() {\n  widget.controller.close();\n  bar(timer.close());\n}\n")


async def test_a_latin1_file_keeps_its_bytes_or_the_rewrite_is_refused(run, root):
    # ast-grep's engine reads UTF-8 only, as its CLI does: the file is not searched, and the
    # answer says so and what to do.
    (root / "legacy.py").write_bytes("# caf\xe9\nprint('cr\xe8me')\n".encode("latin-1"))
    skipped = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "show($A)",
                                          "path": "legacy.py"})
    assert "not UTF-8" in skipped.text and "edit, which keeps its encoding" in skipped.text
    # The built-in matcher (Dart here) rewrites a Latin-1 file in Latin-1.
    source = ("// r\xe9sum\xe9 of the caf\xe9\nvoid main() {\n  print('cr\xe8me');\n"
              "  print(2);\n}\n").encode("latin-1")
    (root / "legacy.dart").write_bytes(source)
    ascii_rewrite = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "show($A)",
                                                "path": "legacy.dart"})
    assert ascii_rewrite.ok, ascii_rewrite.text
    assert (await run.call("resolve", {"edit_id": ascii_rewrite.data["edit_id"],
                                       "action": "accept"})).ok
    # Every byte not rewritten, the captured Latin-1 text included, is as it was.
    assert (root / "legacy.dart").read_bytes() == source.replace(b"print(", b"show(")
    # Latin-1 letters in the rewrite are written in Latin-1; a euro sign it cannot hold.
    latin = await run.call("ast_edit", {"pattern": "show(2)", "rewrite": "show('d\xe9j\xe0 2')",
                                        "path": "legacy.dart"})
    assert latin.ok, latin.text
    assert "+  show('d\xe9j\xe0 2');" in latin.data["diff"]
    refused = await run.call("ast_edit", {"pattern": "show($A)", "rewrite": "montre\u20ac($A)",
                                          "path": "legacy.dart"})
    assert refused.code == "failed" and "Latin-1 (ISO-8859-1)" in refused.error["message"]
    accepted = await run.call("resolve", {"edit_id": latin.data["edit_id"], "action": "accept"})
    assert accepted.ok and (root / "legacy.dart").read_bytes() == source.replace(
        b"print(", b"show(").replace(b"show(2)", "show('d\xe9j\xe0 2')".encode("latin-1"))
