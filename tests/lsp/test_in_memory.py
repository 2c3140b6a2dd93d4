"""A navigation call on files read before and unchanged since answers on the event loop (their
status from the kernel's caches, `files.cached.CachedLookup`), exactly as when it reads them
in worker threads; a changed file, or one too big to quote from the loop, goes to a thread."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_projects import PY_FILES

from jupyter_agent_tools.files import cached

pytestmark = pytest.mark.skipif(not cached.available(),
                                reason="needs Linux 5.12+ (openat2 with RESOLVE_CACHED)")

HOVER = {"action": "hover", "file": "main.py", "line": 3, "symbol": "Square"}
DEFINITION = {"action": "definition", "file": "main.py", "line": 4, "symbol": "area"}


@pytest.fixture
def thread_hops(thread_hops_of) -> list[str]:
    """The functions the lsp session sends to a worker thread."""
    return thread_hops_of("jupyter_agent_tools.lsp.session")


def answer(result) -> tuple:
    return result.ok, result.text, result.data, result.code


async def test_unchanged_files_answer_from_memory_as_from_threads(lsp_runtime, write_files,
                                                                  thread_hops):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    first = [answer(await run.call("lsp", args)) for args in (HOVER, DEFINITION)]
    assert first[0][0] and first[1][2]["locations"][0]["path"] == "shapes.py", first
    assert {"document_now", "_locations_now"} <= set(thread_hops)  # read the first time

    thread_hops.clear()
    again = [answer(await run.call("lsp", args)) for args in (HOVER, DEFINITION)]
    assert again == first
    assert thread_hops == []


async def test_a_changed_file_is_read_again_in_a_thread(lsp_runtime, write_files, root: Path,
                                                        thread_hops):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    assert (await run.call("lsp", HOVER)).ok
    main = root / "proj" / "main.py"
    main.write_text("\n" + PY_FILES["main.py"])  # Square's line is now 4

    thread_hops.clear()
    moved = await run.call("lsp", HOVER)
    assert moved.code == "symbol_not_found", moved.text
    assert "document_now" in thread_hops
    assert (await run.call("lsp", {**HOVER, "line": 4})).ok

    # A place in a file changed since it was quoted is quoted afresh.
    shapes = root / "proj" / "shapes.py"
    assert (await run.call("lsp", {**DEFINITION, "line": 5})).ok
    shapes.write_text(PY_FILES["shapes.py"].replace("def area(self) -> float:\n        return "
                                                    "self.side", "def area(self) -> float:  "
                                                    "# sides\n        return self.side"))
    thread_hops.clear()
    definition = await run.call("lsp", {**DEFINITION, "line": 5})
    assert definition.data["locations"][0]["text"] == "def area(self) -> float:  # sides"
    assert "_locations_now" in thread_hops


async def test_a_place_in_a_big_file_is_quoted_from_a_thread(lsp_runtime, write_files,
                                                             thread_hops):
    padding = "".join(f"filler_{n} = {n}\n" for n in range(200))
    write_files({**PY_FILES, "shapes.py": PY_FILES["shapes.py"] + padding}, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    small = await run.call("lsp", DEFINITION)
    assert small.ok, small.text
    run.runtime.max_loop_read_bytes = 100  # shapes.py is now over it: no splitting on the loop
    thread_hops.clear()
    assert answer(await run.call("lsp", DEFINITION)) == answer(small)
    assert thread_hops == ["_locations_now"]


async def test_a_zero_loop_read_bound_sends_every_look_to_a_thread(lsp_runtime, write_files,
                                                                   thread_hops):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    first = answer(await run.call("lsp", DEFINITION))
    run.runtime.max_loop_read_bytes = 0
    thread_hops.clear()
    assert answer(await run.call("lsp", DEFINITION)) == first
    assert thread_hops == ["roots_and_builds", "document_now", "_locations_now"]
