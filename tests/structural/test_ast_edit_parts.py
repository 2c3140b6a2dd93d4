"""ast_edit over many files: the rewrite is checked in parts, each sent to the workers as
soon as it is rewritten; a part that breaks the syntax refuses the whole edit."""

from __future__ import annotations

from jupyter_agent_tools.structural import session

FILES = session._CHECK_FILES * 2 + 7  # two full parts and the last, unfinished one


def many(numbered: int | None = None) -> dict[str, str]:
    """Files of `print(x)`, but the one `numbered`: `print(1)` (`$A = 1` breaks it only)."""
    return {f"pkg/m{i:04}.py": "print(1)\n" if i == numbered else "print(x)\n"
            for i in range(FILES)}


async def test_every_part_is_rewritten_and_checked(run, files):
    files(many())
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "$A = 1",
                                      "path": "pkg", "language": "python"})
    assert res.ok, res.text
    assert res.data["replacements"] == FILES and len(res.data["files"]) == FILES
    edit = run.resources["parser"].edits.get(res.data["edit_id"])
    assert edit.diff.count("\n-print(x)\n+x = 1\n") == FILES


async def test_a_break_in_any_part_refuses_the_edit(run, files):
    for numbered in (5, session._CHECK_FILES + 5, FILES - 1):  # the first, second, last part
        files(many(numbered))
        res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "$A = 1",
                                          "path": "pkg", "language": "python"})
        assert res.code == "invalid_arguments", res.text
        (broken,) = res.data["broken_files"]
        assert broken["file"] == f"pkg/m{numbered:04}.py"
    assert run.resources["parser"].edits.list() == []
