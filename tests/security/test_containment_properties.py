"""Property: whatever path an agent passes, no file tool reads or writes outside the root.

Paths are built from `..`, `.`, links to folders inside and outside the root, a link to
an outside file, absolute paths, over-long names and NUL bytes. An outside folder holds a
sentinel: its content and file names must never appear in a result, and nothing in it may change. No
call may answer "a bug in the tool". Example counts are modest and derandomized, so CI
runs the same examples every time.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.uris import from_fs_path

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.lsp.session import describe_location
from jupyter_agent_tools.runtime import Resource

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"
LANGUAGE_SERVERS = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"
DEBUGGER = "jupyter_agent_tools.dap.supervisor:DebugSupervisor"
SENTINEL = "SENTINEL_7f3a"
SECRET = f"print('{SENTINEL}')\nold = 1\n"

PROPERTY = settings(max_examples=30, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def _modify_patch(path: str) -> str:
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n-print('{SENTINEL}')\n-old = 1\n"
            "+pwned()\n+old = 2\n")


TOOLS = {
    "read": lambda p: {"path": p},
    "write": lambda p: {"path": p, "content": "pwned()\n"},
    "edit": lambda p: {"path": p, "old_string": "old = 1", "new_string": "old = 2"},
    "glob": lambda p: {"pattern": "**/*", "path": p},
    "grep": lambda p: {"pattern": "SENTINEL|print", "path": p},
    "apply_patch": lambda p: {"patch": _modify_patch(p)},
    "ast_grep": lambda p: {"pattern": "print($A)", "path": p, "language": "python"},
    "ast_edit": lambda p: {"pattern": "print($A)", "rewrite": "pwned($A)", "path": p,
                           "language": "python"},
    "lsp": lambda p: {"action": "definition", "file": p, "line": 1, "symbol": "print"},
    "lsp_rename": lambda p: {"file": p, "line": 1, "symbol": "old", "new_name": "pwned"},
    "debug": lambda p: {"action": "breakpoints", "file": p, "lines": [1]},
}


@pytest.fixture
def world(tmp_path, jp_asyncio_loop):
    """root/ with links in and out; outside/ and rootx/ (a sibling prefix) hold the sentinel."""
    root, outside, sibling = tmp_path / "root", tmp_path / "outside", tmp_path / "rootx"
    for folder in (root / "sub", outside / "deep", sibling):
        folder.mkdir(parents=True)
    (root / "a.py").write_text("print('inside')\nold = 1\n")
    (root / "sub" / "b.py").write_text("print('inside b')\nold = 1\n")
    for folder in (outside, outside / "deep", sibling):
        (folder / "secret.py").write_text(SECRET)
        (folder / f"{SENTINEL}.py").write_text(SECRET)  # a listing out would show its name
        # A server names a notebook by its virtual document, `.nb.ipynb.py`, beside it.
        (folder / "nb.ipynb").write_text(json.dumps({
            "nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [],
                       "execution_count": None, "source": SECRET}]}))
    os.symlink(root / "sub", root / "link_in")
    os.symlink(outside, root / "link_out")
    os.symlink(outside / "secret.py", root / "file_out")
    os.symlink(root / "link_out", root / "sub" / "chain_out")  # a link to a link out
    runtime = Runtime(root_dir=str(root),
                      resource_providers=[PARSER, LANGUAGE_SERVERS, DEBUGGER])
    run = jp_asyncio_loop.run_until_complete(runtime.create_run(cwd="sub",
                                                                conversation_id="property"))
    yield root, outside, sibling, run
    jp_asyncio_loop.run_until_complete(runtime.shutdown())


def fingerprint(*folders: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry below the folders: kind, content (or link target) and mtime."""
    seen = {}
    for folder in folders:
        for path in [folder, *sorted(folder.rglob("*"))]:
            info = os.lstat(path)
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path).encode(), info.st_mtime_ns)
            elif path.is_dir():
                seen[str(path)] = ("dir", b"", info.st_mtime_ns)
            else:
                seen[str(path)] = ("file", path.read_bytes(), info.st_mtime_ns)
    return seen


NAMES = [".", "..", "sub", "link_in", "link_out", "file_out", "chain_out", "deep", "a.py",
         "b.py", "secret.py", "new.py", "x" * 300, "n\x00ul", "rootx", "~"]


def paths(outside: Path, sibling: Path, names: list[str] = NAMES) -> st.SearchStrategy[str]:
    names = st.sampled_from(names)
    relative = st.lists(names, min_size=1, max_size=6).map("/".join)
    absolute = st.sampled_from([str(outside), str(outside / "secret.py"), str(sibling),
                                str(sibling / "secret.py"), "/", "/etc/hostname"])
    prefixed = st.tuples(absolute, relative).map("/".join)
    return st.one_of(relative, absolute, prefixed)


def check(result, before, outside, sibling) -> None:
    shown = result.text + json.dumps(result.data) + json.dumps(result.blocks)
    assert SENTINEL not in shown, result.text
    assert "bug in the tool" not in result.text, result.text
    assert fingerprint(outside, sibling) == before


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_no_path_leads_a_file_tool_out_of_the_root(world, tool, jp_asyncio_loop):
    _, outside, sibling, run = world
    before = fingerprint(outside, sibling)

    @PROPERTY
    @given(path=paths(outside, sibling))
    def calls_stay_inside(path: str) -> None:
        result = jp_asyncio_loop.run_until_complete(run.call(tool, TOOLS[tool](path)))
        check(result, before, outside, sibling)
        edit_id = result.data.get("edit_id") if result.ok else None
        if edit_id:  # what ast_edit staged is accepted too: it may only write inside
            accepted = jp_asyncio_loop.run_until_complete(
                run.call("resolve", {"edit_id": edit_id, "action": "accept"}))
            check(accepted, before, outside, sibling)

    calls_stay_inside()


SWAPS = ["none", "folder_to_link", "file_to_link", "file_renamed_over", "folder_renamed"]


def test_swaps_between_staging_and_accept_never_write_outside(world, jp_asyncio_loop):
    root, outside, sibling, run = world
    cases = itertools.count()

    @PROPERTY
    @given(swap=st.sampled_from(SWAPS), depth=st.integers(min_value=1, max_value=3))
    def accept_writes_the_staged_files_or_nothing(swap: str, depth: int) -> None:
        case = f"case{next(cases)}"
        folder = Path(case, *["pkg"] * depth)
        (root / folder).mkdir(parents=True)
        (outside / folder).mkdir(parents=True)
        (root / folder / "app.py").write_text(SECRET)
        (outside / folder / "app.py").write_text(SECRET)
        staged = jp_asyncio_loop.run_until_complete(run.call("ast_edit", {
            "pattern": "print($A)", "rewrite": "pwned($A)", "path": f"../{case}",
            "language": "python"}))
        assert staged.ok and staged.data["edit_id"], staged.text
        inside_folder = root / folder
        if swap == "folder_to_link":
            os.rename(inside_folder, inside_folder.with_name("moved"))
            os.symlink(outside / folder, inside_folder)
        elif swap == "file_to_link":
            os.unlink(inside_folder / "app.py")
            os.symlink(outside / folder / "app.py", inside_folder / "app.py")
        elif swap == "file_renamed_over":
            (inside_folder / "copy.py").write_text(SECRET)
            os.replace(inside_folder / "copy.py", inside_folder / "app.py")
        elif swap == "folder_renamed":  # the staged file now lives elsewhere in the root
            os.rename(inside_folder, inside_folder.with_name("moved"))
            inside_folder.mkdir()
            (inside_folder / "app.py").write_text(SECRET)
        before = fingerprint(outside, sibling)
        accepted = jp_asyncio_loop.run_until_complete(
            run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"}))
        check(accepted, before, outside, sibling)
        if swap == "none":
            assert accepted.ok, accepted.text
            assert (inside_folder / "app.py").read_text().startswith("pwned(")
        else:
            assert accepted.code in {"stale_edit", "path_outside_root"}, accepted.text
            for left in (inside_folder, inside_folder.with_name("moved")):
                if left.is_dir() and not left.is_symlink():
                    assert (left / "app.py").read_text() == SECRET  # nothing written inside

    accept_writes_the_staged_files_or_nothing()


def leads_out(root: Path, path: Path) -> bool:
    """Whether `path`, its links followed, lands outside `root` (a NUL byte leads nowhere)."""
    if "\x00" in str(path):
        return False
    real = Path(os.path.realpath(path))
    return real != root and root not in real.parents


def test_locations_a_language_server_names_are_quoted_only_inside_the_root(world,
                                                                           jp_asyncio_loop):
    """Whatever file a server answers with (definition, references, symbols, ...), its line is
    quoted only when the file is inside the root; outside, it is named and marked."""
    root, outside, sibling, run = world
    session = run.resources[Resource.LSP]
    names = [*NAMES, "nb.ipynb", ".nb.ipynb.py"]

    @PROPERTY
    @given(places=st.lists(st.tuples(paths(outside, sibling, names),
                                     st.integers(min_value=0, max_value=3)),
                           min_size=1, max_size=4))
    def only_inside_lines_are_quoted(places: list[tuple[str, int]]) -> None:
        found = [(from_fs_path(str(run.cwd / path)) or path,
                  types.Range(types.Position(line, 0), types.Position(line, 1)))
                 for path, line in places]
        entries = jp_asyncio_loop.run_until_complete(session.locations(found))
        assert len(entries) == len(found)
        for (path, _), entry in zip(places, entries, strict=True):
            assert SENTINEL not in json.dumps(entry) + describe_location(entry), entry
            if leads_out(root, run.cwd / path):
                assert entry.get("outside_root"), entry
            if entry.get("outside_root"):
                assert "text" not in entry and "outside the server's root" in (
                    describe_location(entry))
        inside = [e for e in entries if e.get("text")]
        assert all(e["text"] in {"print('inside')", "old = 1", "print('inside b')"}
                   for e in inside), inside

    only_inside_lines_are_quoted()
