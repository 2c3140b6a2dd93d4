"""debug: one flat argument object, checked per action: a missing field names the action."""

from __future__ import annotations


async def test_a_missing_field_names_the_action_and_what_it_needs(runtime):
    run = await runtime.create_run(conversation_id="c")
    result = await run.call("debug", {"action": "breakpoints", "file": "app.py"})
    assert result.code == "invalid_arguments"
    assert result.error["message"] == (
        "debug breakpoints needs `lines`: its 1-based lines (an empty list clears that file).")
    launch = await run.call("debug", {"action": "launch"})
    assert launch.error["message"] == "debug launch needs `program`: a path to run."
    both = await run.call("debug", {"action": "breakpoints"})
    assert "needs `lines`" in both.error["message"]


async def test_fields_of_other_actions_are_ignored_and_null_is_not_given(runtime, root):
    (root / "app.py").write_text("x = 1\n")
    run = await runtime.create_run(conversation_id="c")
    result = await run.call("debug", {"action": "breakpoints", "file": "app.py", "lines": [1],
                                      "expression": "x", "frame_id": None})
    assert result.ok and result.data == {"file": "app.py", "lines": [1], "sent": False}
    scopes = await run.call("debug", {"action": "scopes", "frame_id": None})
    assert scopes.error["message"] == "debug scopes needs `frame_id`: a frame id from stack."


async def test_an_action_without_a_session_says_to_launch_first(runtime):
    run = await runtime.create_run(conversation_id="c")
    result = await run.call("debug", {"action": "stack"})
    assert result.code == "no_session"
    assert "call debug with action=launch (or attach) first" in result.error["message"]
