"""Stack frames whose source lies outside the server root (through a symlinked folder inside
it) are listed by path, marked outside, and never quoted."""

from __future__ import annotations

import textwrap

from debug_helpers import ok

OUTSIDE_SECRET = "SECRET = 'outside line that must not be quoted'"


async def test_a_frame_in_a_symlinked_outside_folder_is_named_not_quoted(runtime, root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "helper.py").write_text(textwrap.dedent(f"""\
        def call_back(function):
            {OUTSIDE_SECRET}
            return function(SECRET)
        """))
    (root / "linked").symlink_to(elsewhere)
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "app.py").write_text(textwrap.dedent("""\
        import sys
        sys.path.insert(0, "linked")
        from helper import call_back


        def inside(value):
            return len(value)


        print(call_back(inside))
        """))
    run = await runtime.create_run(conversation_id="outside")
    refused = await run.call("debug", {"action": "breakpoints", "file": "linked/helper.py",
                                       "lines": [2]})
    assert refused.code == "path_outside_root"

    await ok(run, "breakpoints", file="app.py", lines=[7])
    launched = await ok(run, "launch", program="app.py")
    assert launched.data["frame"]["file"] == "app.py" and "return len(value)" in launched.text

    stack = await ok(run, "stack")
    helper = next(f for f in stack.data["frames"] if f["name"] == "call_back")
    assert helper["outside_root"] and "source_line" not in helper
    assert helper["file"].endswith("helper.py")
    assert f"{helper['file']}:3 (outside the server's root)" in stack.text

    stepped = await ok(run, "step_out")  # back into the outside frame: named, not quoted
    assert stepped.data["frame"]["outside_root"], stepped.text
    assert "outside the server's root" in stepped.text
    assert "function(SECRET)" not in stepped.text and "SECRET" not in str(stepped.data)
    await ok(run, "terminate")
