"""Code actions through the tool vs the same requests sent straight to the server.

    python -m benchmarks.bench_code_actions [--rounds N]

On a Python file served by ruff's server: `lsp code_actions` listing the organize-imports
action, then the same call with `apply: 1` (codeAction/resolve, the edit planned and staged
with its diff; the staged edit is discarded untimed) vs textDocument/codeAction and
codeAction/resolve sent on the server's connection directly (same process, same open
document), interleaved.
Target (issue #29): tool ≤ 1.2 × direct + 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import cast

from lsprotocol import types
from pygls.uris import from_fs_path

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.lsp.supervisor import LanguageServerSupervisor
from jupyter_agent_tools.runtime import Resource

SUPERVISOR = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"
PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"
MAIN = "import sys\nimport abc\nimport os\n\nprint(sys.argv, abc, os.sep)\n"
KIND = "source.organizeImports"


async def bench(rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        project.mkdir()
        (project / "pyproject.toml").write_text("[project]\nname = 'bench'\nversion = '0'\n")
        (project / "main.py").write_text(MAIN)
        runtime = Runtime(root_dir=tmp, resource_providers=[SUPERVISOR, PARSER])
        supervisor = cast(LanguageServerSupervisor, runtime.providers[Resource.LSP])
        supervisor.specs = {name: spec for name, spec in supervisor.specs.items()
                            if name == "ruff"}
        run = await runtime.create_run(cwd="proj")
        listing = {"action": "code_actions", "file": "main.py", "line": 1, "kind": KIND}
        warm = await run.call("lsp", listing)
        assert warm.ok and warm.data["actions"], warm.text
        server = supervisor.existing((project.resolve(), "ruff"))
        assert server is not None and server.connection is not None, "ruff's server is not up"
        connection = server.connection
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(from_fs_path(str(project / "main.py"))),
            range=types.Range(types.Position(0, 0), types.Position(1, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[KIND]))

        async def tool() -> None:
            listed = await run.call("lsp", listing)
            assert listed.ok and listed.data["actions"], listed.text
            staged = await run.call("lsp", {**listing, "apply": 1})
            assert staged.ok and staged.data["edit_id"], staged.text
            staged_ids.append(staged.data["edit_id"])

        async def direct() -> None:
            offered = await connection.protocol.send_request_async(
                types.TEXT_DOCUMENT_CODE_ACTION, params)
            resolved = await connection.protocol.send_request_async(
                types.CODE_ACTION_RESOLVE, offered[0])
            assert resolved.edit is not None

        staged_ids: list[str] = []
        results: dict[str, list[float]] = {"tool": [], "direct": []}
        for index in range(rounds):
            order = [("tool", tool), ("direct", direct)]
            for kind, call in order if index % 2 else reversed(order):
                started = time.perf_counter()
                await call()
                results[kind].append(time.perf_counter() - started)
            await run.call("resolve", {"edit_id": staged_ids[-1], "action": "discard"})
        await runtime.shutdown()
    return {name: statistics.median(samples) * 1000 for name, samples in results.items()} | {
        f"{name}_min": min(samples) * 1000 for name, samples in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    figures = asyncio.run(bench(parser.parse_args().rounds))
    tool, direct = figures["tool"], figures["direct"]
    budget = 1.2 * direct + 5
    print("code actions benchmark (medians, ms): list + apply (staged) vs codeAction + resolve")
    print(f"  tool {tool:7.2f}  direct {direct:7.2f}  ratio {tool / direct:5.2f}x  "
          f"budget {budget:6.2f}  {'OK' if tool <= budget else 'OVER'}  "
          f"(min: tool {figures['tool_min']:.2f}, direct {figures['direct_min']:.2f})")


if __name__ == "__main__":
    main()
