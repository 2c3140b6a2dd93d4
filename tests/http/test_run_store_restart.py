"""Runs survive a crash: a real `jupyter server` killed with `kill -9`, started again on the same
root and run store. Its runs are listed as ended by the restart, their transcripts read and
replay, their staged edits are accepted (checked against the files) or discarded, their cards
show as ended, and a new run of the same conversation gets the old transcript."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import httpx
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_agent_tools.testing.replay import replay_embedded
from jupyter_agent_tools.testing.server import JupyterServerProcess

WAIT = 60  # seconds: a bound on waits that should end soon, never an assertion


async def started(root: Path, store: Path) -> JupyterServerProcess:
    server = JupyterServerProcess(root, extra_args=[f"--Runtime.run_store_path={store}"])
    await asyncio.to_thread(server.start)
    return server


def api(server: JupyterServerProcess) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.url.rstrip("/") + "/agent-tools/api/",
                             headers={"Authorization": f"token {server.token}"}, timeout=WAIT)


async def call(http: httpx.AsyncClient, run_id: str, tool: str, args: dict) -> dict:
    response = await http.post(f"runs/{run_id}/calls", json={"tool": tool, "args": args})
    assert response.status_code == 200, response.text
    return response.json()


async def test_runs_survive_kill_9(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name, number in (("a.py", 1), ("b.py", 2), ("c.py", 3)):
        (root / name).write_text(f"print({number})\n")
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    store = tmp_path / "data" / "agent_tools" / "runs.sqlite3"

    server = await started(root, store)
    try:
        async with api(server) as http:
            created = await http.post("runs", json={"space": "lab", "conversation_id": "conv-1"})
            assert created.status_code == 201, created.text
            run = created.json()
            assert run["state"] == "open" and run["ended_by"] is None
            assert (await call(http, run["id"], "read", {"path": "a.py"}))["ok"]
            edit_ids = []
            for name in ("a.py", "b.py", "c.py"):
                staged = await call(http, run["id"], "ast_edit", {
                    "pattern": "print($A)", "rewrite": "log($A)", "path": name})
                assert staged["ok"], staged["text"]
                edit_ids.append(staged["data"]["edit_id"])

            # A human in the space, and a card the agent waits on when the server dies.
            ws = await websocket_connect(HTTPRequest(
                server.url.replace("http://", "ws://").rstrip("/")
                + "/agent-tools/api/spaces/lab/events",
                headers={"Authorization": f"token {server.token}"}))
            asking = asyncio.ensure_future(http.post(f"runs/{run['id']}/calls", json={
                "tool": "ask_user", "args": {"question": "Which logger?",
                                             "options": [{"label": "std"}, {"label": "rich"}]}}))
            while True:
                event = json.loads(await asyncio.wait_for(ws.read_message(), WAIT))
                if event["type"] == "question_asked":
                    card = event["card"]
                    break
            # Listed through the store's thread: every write made before is committed.
            listed = (await http.get("runs")).json()
            assert [r["id"] for r in listed] == [run["id"]]
            server.crash()
            ws.close()
            asking.cancel()
    finally:
        server.stop()

    assert store.is_file() and not store.resolve().is_relative_to(root.resolve())
    assert not list(root.rglob("*.sqlite3*"))
    server = await started(root, store)
    try:
        async with api(server) as http:
            listed = (await http.get("runs")).json()
            assert [(r["id"], r["state"], r["ended_by"]) for r in listed] == [
                (run["id"], "ended", "restart")]
            described = (await http.get(f"runs/{run['id']}")).json()
            assert described["ended_by"] == "restart" and described["conversation_id"] == "conv-1"

            transcript = await http.get(f"runs/{run['id']}/transcript")
            assert transcript.status_code == 200
            entries = transcript.json()
            assert [e["tool"] for e in entries] == ["read", "ast_edit", "ast_edit", "ast_edit"]
            assert transcript.headers["X-Transcript-Dropped"] == "0"

            edits = (await http.get(f"runs/{run['id']}/edits")).json()
            assert [(e["edit_id"], e["status"]) for e in edits] == [
                (edit_id, "staged") for edit_id in edit_ids]
            one = (await http.get(f"runs/{run['id']}/edits/{edit_ids[0]}")).json()
            assert "+log(1)" in one["diff"]

            # Accepted: checked against the file, then written.
            accepted = await http.post(f"runs/{run['id']}/edits/{edit_ids[0]}",
                                       json={"action": "accept"})
            assert accepted.status_code == 200, accepted.text
            assert accepted.json()["status"] == "accepted"
            assert (root / "a.py").read_text() == "log(1)\n"
            again = await http.post(f"runs/{run['id']}/edits/{edit_ids[0]}",
                                    json={"action": "accept"})
            assert again.status_code == 409 and "already accepted" in again.text
            # Discarded: nothing written.
            discarded = await http.post(f"runs/{run['id']}/edits/{edit_ids[1]}",
                                        json={"action": "discard"})
            assert discarded.status_code == 200 and discarded.json()["status"] == "discarded"
            assert (root / "b.py").read_text() == "print(2)\n"
            # A file changed since staging: refused, nothing written, the edit is stale.
            (root / "c.py").write_text("print(30)\n")
            stale = await http.post(f"runs/{run['id']}/edits/{edit_ids[2]}",
                                    json={"action": "accept"})
            assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_edit"
            assert (root / "c.py").read_text() == "print(30)\n"
            statuses = [e["status"] for e in (await http.get(f"runs/{run['id']}/edits")).json()]
            assert statuses == ["accepted", "discarded", "stale"]

            # The card the agent waited on: shown as ended; answering it says why not.
            cards = (await http.get(f"runs/{run['id']}/questions")).json()
            assert [(c["id"], c["status"]) for c in cards] == [(card["id"], "ended")]
            answered = await http.post(f"runs/{run['id']}/questions/{card['id']}",
                                       json={"answer": "std"})
            assert answered.status_code == 409 and "ended (restart)" in answered.text
            missing = await http.post(f"runs/{run['id']}/questions/nope", json={"answer": "std"})
            assert missing.status_code == 404
            # An ended run takes no calls.
            refused = await http.post(f"runs/{run['id']}/calls", json={"tool": "read", "args": {}})
            assert refused.status_code == 404

            # The same conversation: a new run with the old transcript, told what did not last.
            resumed = (await http.post("runs", json={"conversation_id": "conv-1"})).json()
            assert resumed["resumed_from"] == run["id"] and "did not survive" in resumed["notice"]
            first = await call(http, resumed["id"], "glob", {"pattern": "*.py"})
            assert "Kernels (with their variables) and debug sessions did not survive" in first["text"]
            later = await call(http, resumed["id"], "glob", {"pattern": "*.py"})
            assert "did not survive" not in later["text"]
            carried = (await http.get(f"runs/{resumed['id']}/transcript")).json()
            assert [e["call_id"] for e in carried[:4]] == [e["call_id"] for e in entries]
            assert [e["tool"] for e in carried[4:]] == ["glob", "glob"]

            # Forgetting an ended run.
            assert (await http.delete(f"runs/{run['id']}")).status_code == 204
            assert (await http.get(f"runs/{run['id']}")).status_code == 404
    finally:
        server.stop()

    # The stored transcript replays against the files it was recorded on.
    report, _ = await replay_embedded(entries, str(pristine))
    assert report.replayed == 4 and not report.differences, [
        d.describe() for d in report.differences]


async def test_a_server_keeps_its_runs_in_jupyters_data_directory(jp_serverapp, jp_data_dir,
                                                                  jp_root_dir, api):
    store = jp_serverapp.web_app.settings["agent_tools_runtime"].run_store
    assert store.path == (Path(jp_data_dir) / "agent_tools" / "runs.sqlite3").resolve()
    code, run = await api("POST", "runs", {})
    assert code == 201
    code, listed = await api("GET", "runs")
    assert code == 200 and [r["id"] for r in listed] == [run["id"]]
    assert store.path.is_file() and not store.path.is_relative_to(Path(jp_root_dir).resolve())
