"""Fixtures of the structural tests: a runtime with the real parser resource and its runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_agent_tools import Runtime

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"


@pytest.fixture
def parser_runtime(root: Path, jp_asyncio_loop):
    """A Runtime over `root` whose only resource is the parser (real worker processes)."""
    rt = Runtime(root_dir=str(root), resource_providers=[PARSER])
    yield rt
    jp_asyncio_loop.run_until_complete(rt.shutdown())


@pytest.fixture
def run(parser_runtime, jp_asyncio_loop):
    """A full-surface run with the parser attached."""
    return jp_asyncio_loop.run_until_complete(parser_runtime.create_run())


@pytest.fixture
def files(root: Path):
    """`files({"a.py": "..."})` creates files (relative path -> text) under `root`."""

    def create(contents: dict[str, str]) -> None:
        for name, text in contents.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    return create
