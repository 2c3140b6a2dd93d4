async def test_create_and_call(api, jp_root_dir):
    (jp_root_dir / "hello.txt").write_text("hi\n")
    code, run = await api("POST", "runs", {"cwd": "."})
    assert code == 201
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "read", "args": {"path": "hello.txt"}})
    assert code == 200
    assert result["ok"] and "hi" in result["text"]
