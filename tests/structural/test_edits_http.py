"""The edits routes over a real Jupyter server with the extension."""

from __future__ import annotations

from pathlib import Path


async def test_staged_edits_are_served(api, jp_root_dir: Path):
    (jp_root_dir / "a.py").write_text("print(1)\nprint(2)\n")
    code, run = await api("POST", "runs", {"resources": ["parser"]})
    assert code == 201 and {"ast_grep", "ast_edit", "resolve"} <= set(run["tools"])
    args = {"pattern": "print($A)", "rewrite": "show($A)", "path": "a.py"}
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "ast_edit", "args": args})
    assert code == 200 and result["ok"], result
    code, edits = await api("GET", f"runs/{run['id']}/edits")
    assert code == 200 and [e["edit_id"] for e in edits] == ["edit_1"]
    assert edits[0]["status"] == "staged" and edits[0]["files"] == {"a.py": 2}
    code, edit = await api("GET", f"runs/{run['id']}/edits/edit_1")
    assert code == 200 and "+show(2)" in edit["diff"]
    code, body = await api("GET", f"runs/{run['id']}/edits/edit_7")
    assert code == 404 and body["error"]["code"] == "unknown_edit"
    code, result = await api("POST", f"runs/{run['id']}/calls",
                             {"tool": "resolve", "args": {"edit_id": "edit_1", "action": "accept"}})
    assert result["ok"] and (jp_root_dir / "a.py").read_text() == "show(1)\nshow(2)\n"
    code, edit = await api("GET", f"runs/{run['id']}/edits/edit_1")
    assert edit["status"] == "accepted"
    # Another run sees none of it.
    _, other = await api("POST", "runs", {"resources": ["parser"]})
    code, edits = await api("GET", f"runs/{other['id']}/edits")
    assert code == 200 and edits == []
    code, body = await api("GET", f"runs/{other['id']}/edits/edit_1")
    assert code == 404 and body["error"]["code"] == "unknown_edit"
