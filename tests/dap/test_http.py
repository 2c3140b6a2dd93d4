"""The debug tool through a real Jupyter server: status lists the adapters; calls go through."""

from __future__ import annotations

from debug_helpers import LINE_IN_ADD, PYTHON_PROGRAM


async def test_debug_over_http(api, jp_root_dir):
    (jp_root_dir / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (jp_root_dir / "app.py").write_text(PYTHON_PROGRAM)
    code, status = await api("GET", "status")
    assert code == 200
    assert {"debugpy", "lldb", "delve", "dart"} <= set(status["resources"]["debug"]["adapters"])

    code, run = await api("POST", "runs", {"cwd": ".", "conversation_id": "http"})
    assert code == 201 and "debug" in run["tools"]

    async def debug(**args):
        code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "debug", "args": args})
        assert code == 200
        return result

    assert (await debug(action="breakpoints", file="app.py", lines=[LINE_IN_ADD]))["ok"]
    launched = await debug(action="launch", program="app.py")
    assert launched["ok"] and launched["data"]["frame"]["line"] == LINE_IN_ADD
    again = await debug(action="launch", program="app.py")
    assert not again["ok"] and again["error"]["code"] == "session_exists"
    code, _ = await api("DELETE", f"runs/{run['id']}")
    assert code == 204
