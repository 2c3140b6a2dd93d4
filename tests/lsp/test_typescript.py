"""Real typescript-language-server (typescript@6) on a two-file project."""

from __future__ import annotations

import pytest
from lsp_projects import TS_FILES

from jupyter_agent_tools.lsp.specs import find_executable

pytestmark = pytest.mark.skipif(
    find_executable(["typescript-language-server"]) is None,
    reason="typescript-language-server is installed by scripts/setup.sh (make test puts it on PATH)",
)


async def test_navigation_diagnostics_and_rename(lsp_runtime, write_files, root):
    write_files(TS_FILES, "web")
    run = await lsp_runtime().create_run(cwd="web")
    # The first navigation waits for the project, so tsserver's syntax-only answers (the
    # import line, "import greet") never reach the agent.
    definition = await run.call("lsp", {"action": "definition", "file": "app.ts", "line": 3,
                                        "symbol": "greet"})
    assert definition.ok, definition.text
    assert {loc["path"] for loc in definition.data["locations"]} == {"lib.ts"}
    hover = await run.call("lsp", {"action": "hover", "file": "app.ts", "line": 3,
                                   "symbol": "greet"})
    assert "greet(name: string): string" in hover.text

    implementation = await run.call("lsp", {"action": "implementation", "file": "lib.ts",
                                            "line": 1, "symbol": "greet"})
    assert implementation.data["locations"][0]["path"] == "lib.ts", implementation.text
    outline = await run.call("lsp", {"action": "symbols", "file": "lib.ts"})
    assert [s["name"] for s in outline.data["symbols"]] == ["greet"]

    clean = await run.call("lsp", {"action": "diagnostics", "file": "app.ts"})
    assert clean.data["status"] == "clean", clean.text


    broken = TS_FILES["app.ts"].replace("const message: string", "const message: number")
    written = await run.call("write", {"path": "app.ts", "content": broken})
    assert [d["code"] for d in written.data["diagnostics"]["new"]] == ["2322"], written.text
    still = await run.call("write", {"path": "lib.ts", "content": TS_FILES["lib.ts"] + "\n"})
    assert still.data["diagnostics"]["files"]["lib.ts"] == {"status": "ok", "total": 0, "new": 0}

    renamed = await run.call("lsp_rename", {"file": "lib.ts", "line": 1, "symbol": "greet",
                                            "new_name": "welcome"})
    assert renamed.ok, renamed.text
    assert {f["path"] for f in renamed.data["files"]} == {"lib.ts", "app.ts"}
    assert "welcome('bob')" in (root / "web" / "app.ts").read_text()
    assert "No new diagnostics in app.ts (1 known remain)" in renamed.text
