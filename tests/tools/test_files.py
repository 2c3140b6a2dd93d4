"""read, write, edit: examples of use and their errors."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FILE_TOOLS = {
    "read": lambda path: {"path": path},
    "write": lambda path: {"path": path, "content": "new\n"},
    "edit": lambda path: {"path": path, "old_string": "old", "new_string": "new"},
}


async def test_read_numbers_lines_and_pages(runtime, root):
    (root / "poem.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    run = await runtime.create_run()
    result = await run.call("read", {"path": "poem.txt", "offset": 4, "limit": 2})
    assert result.ok
    assert result.text.splitlines()[:2] == ["4\tline 4", "5\tline 5"]
    assert "offset=6" in result.text
    assert result.data == {"path": "poem.txt", "start_line": 4, "end_line": 5, "total_lines": 10,
                           "encoding": "utf-8", "line_endings": "lf"}


async def test_read_cuts_a_line_past_the_bound_and_numbers_the_rest_aligned(runtime, root):
    (root / "wide.txt").write_text("x" * 2_500 + "\n" + "".join(f"l{i}\n" for i in range(2, 11)))
    run = await runtime.create_run()
    lines = (await run.call("read", {"path": "wide.txt"})).text.splitlines()
    assert lines[0] == " 1\t" + "x" * runtime.max_line_chars + " [line cut]"
    assert lines[1] == " 2\tl2" and lines[9] == "10\tl10"


async def test_read_refuses_binary_and_missing_files(runtime, root):
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    run = await runtime.create_run()
    binary = await run.call("read", {"path": "blob.bin"})
    assert binary.code == "failed" and "binary" in binary.error["message"]
    missing = await run.call("read", {"path": "nope.txt"})
    assert missing.code == "not_found"
    assert (await run.call("read", {"path": "x", "offset": 0})).code == "invalid_arguments"


async def test_read_refuses_oversized_files(runtime, root):
    runtime.read_max_bytes = 100
    (root / "big.txt").write_text("x" * 200)
    run = await runtime.create_run()
    result = await run.call("read", {"path": "big.txt"})
    assert result.code == "failed" and "limit" in result.error["message"]


async def test_write_creates_parents_and_reports(runtime, root):
    run = await runtime.create_run()
    result = await run.call("write", {"path": "pkg/mod.py", "content": "x = 1\n"})
    assert result.ok and result.data["created"] is True
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"
    again = await run.call("write", {"path": "pkg/mod.py", "content": "x = 2\n"})
    assert again.data["created"] is False and again.text.startswith("Overwrote")
    assert (await run.call("write", {"path": "pkg", "content": ""})).code == "invalid_arguments"


async def test_edit_requires_a_unique_match_unless_replace_all(runtime, root):
    target = root / "a.py"
    target.write_text("x = 1\ny = 1\nx = 1\n")
    run = await runtime.create_run()
    ambiguous = await run.call("edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert ambiguous.code == "invalid_arguments"
    assert "2 times" in ambiguous.error["message"] and "lines 1, 3" in ambiguous.error["message"]
    assert target.read_text() == "x = 1\ny = 1\nx = 1\n"
    missing = await run.call("edit", {"path": "a.py", "old_string": "z = 1", "new_string": "z"})
    assert missing.code == "not_found"
    unique = await run.call("edit", {"path": "a.py", "old_string": "y = 1", "new_string": "y = 3"})
    assert unique.ok and target.read_text() == "x = 1\ny = 3\nx = 1\n"
    everywhere = await run.call(
        "edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 9", "replace_all": True}
    )
    assert everywhere.data["replacements"] == 2 and target.read_text() == "x = 9\ny = 3\nx = 9\n"


async def test_an_edit_matching_everywhere_names_the_first_lines_only(runtime, root):
    (root / "big.txt").write_text("item\n" * 200_000)
    run = await runtime.create_run()
    ambiguous = await run.call("edit", {"path": "big.txt", "old_string": "item",
                                        "new_string": "thing"})
    message = ambiguous.error["message"]
    assert "200000 times" in message and "first at lines 1, 2, 3," in message
    assert len(message) < 1_000
    assert ambiguous.data["lines"] == list(range(1, 21))
    assert ambiguous.data["occurrences"] == 200_000


async def test_edit_validates_its_arguments(runtime):
    run = await runtime.create_run()
    for args in [{"path": "a"}, {"path": "a", "old_string": "", "new_string": "b"},
                 {"path": "a", "old_string": "a", "new_string": "b", "replace_all": "often"}]:
        assert (await run.call("edit", args)).code == "invalid_arguments"


# What the operating system refuses, and how each file tool answers it: a contract code,
# the name the agent used, and never "a bug in the tool".
OS_REFUSALS = [
    ("x" * 300, "invalid_arguments", "too long"),
    ("/".join(["folder"] * 700), "invalid_arguments", "too long"),
    ("notes.txt/inner.txt", "not_found", "not a folder"),
    ("folder", "invalid_arguments", "is a folder"),
    ("pipe", "invalid_arguments", "not a regular file"),
]


@pytest.mark.parametrize("tool", sorted(FILE_TOOLS))
@pytest.mark.parametrize(("path", "code", "says"), OS_REFUSALS)
async def test_os_refusals_are_contract_errors(runtime, root, tool, path, code, says):
    (root / "notes.txt").write_text("old\n")
    (root / "folder").mkdir()
    os.mkfifo(root / "pipe")  # opening it for reading would hang a naive tool
    run = await runtime.create_run()
    result = await run.call(tool, FILE_TOOLS[tool](path))
    assert result.code == code and says in result.error["message"], result.text
    assert "bug in the tool" not in result.text
    assert (root / "notes.txt").read_text() == "old\n"


# Root ignores file permissions: the refusal is real only for another user.
# The interpreter's own files may be unreadable to that user: import first, then drop.
AS_NOBODY = """
import asyncio, json, os, sys
from jupyter_agent_tools import Runtime

async def main():
    runtime = Runtime(root_dir=sys.argv[1], resource_providers=[])
    run = await runtime.create_run()
    await run.call("read", {"path": "."})  # loads what a call needs, while still allowed
    os.setgid(65534); os.setuid(65534)
    answers = {}
    for tool, args in json.loads(sys.argv[2]).items():
        result = await run.call(tool, args)
        answers[tool] = [result.code, result.error and result.error["message"]]
    await runtime.shutdown()
    print(json.dumps(answers))

asyncio.run(main())
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_files_the_server_user_may_not_touch_are_permission_denied():
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        root.chmod(0o755)
        (root / "locked.txt").write_text("old\n")
        (root / "locked.txt").chmod(0o000)
        (root / "sealed").mkdir(mode=0o555)
        calls = {**{tool: make("locked.txt") for tool, make in FILE_TOOLS.items()},
                 "apply_patch": {"patch": "--- /dev/null\n+++ b/sealed/new.txt\n@@ -0,0 +1 @@\n+x\n"}}
        done = subprocess.run([sys.executable, "-c", AS_NOBODY, str(root), json.dumps(calls)],
                              capture_output=True, text=True, timeout=120, check=True)
        answers = json.loads(done.stdout.splitlines()[-1])
        for tool, (code, message) in answers.items():
            assert code == "permission_denied", (tool, message)
            assert "server's user" in message and "permissions" in message
        assert (root / "locked.txt").stat().st_mode & 0o777 == 0
        assert list((root / "sealed").iterdir()) == []


async def test_write_gives_new_files_the_usual_mode_and_keeps_existing_modes(runtime, root):
    previous = os.umask(0o022)
    try:
        run = await runtime.create_run()
        (root / "tool.sh").write_text("echo\n")
        (root / "tool.sh").chmod(0o755)
        assert (await run.call("write", {"path": "fresh.txt", "content": "x"})).ok
        assert (await run.call("edit", {"path": "tool.sh", "old_string": "echo",
                                        "new_string": "echo hi"})).ok
    finally:
        os.umask(previous)
    assert (root / "fresh.txt").stat().st_mode & 0o777 == 0o644
    assert (root / "tool.sh").stat().st_mode & 0o777 == 0o755


async def test_a_failed_write_names_the_file_and_leaves_no_temporary(runtime, root):
    run = await runtime.create_run()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))  # a real "file too large"
    try:
        result = await run.call("write", {"path": "pkg/f4.py", "content": "y" * 4096})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert result.code == "failed"
    assert result.error["message"].startswith("Writing pkg/f4.py failed (File too large)")
    assert ".tmp" not in result.text
    assert list(root.iterdir()) == []  # neither the file, its temporary, nor its folder


async def test_links_that_stay_inside_the_root_still_work(runtime, root):
    (root / "real").mkdir()
    (root / "real" / "mod.py").write_text("old\n")
    os.symlink(root / "real", root / "alias")
    os.symlink(root / "real" / "mod.py", root / "mod_link.py")
    run = await runtime.create_run()
    assert "old" in (await run.call("read", {"path": "alias/mod.py"})).text
    edited = await run.call("edit", {"path": "mod_link.py", "old_string": "old", "new_string": "new"})
    assert edited.ok and edited.data["path"] == "real/mod.py"  # results name the real file
    assert (await run.call("write", {"path": "alias/added.py", "content": "x\n"})).ok
    assert (root / "real" / "mod.py").read_text() == "new\n"
    assert (root / "real" / "added.py").read_text() == "x\n"
    assert (root / "mod_link.py").is_symlink() and (root / "alias").is_symlink()


# Notebooks: read lists cells, edit changes one cell's source, write must be nbformat.

def _write_analysis(root: Path) -> Path:
    """A small analysis notebook as JupyterLab saves it, with outputs and a cell magic."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    notebook = new_notebook(
        cells=[
            new_markdown_cell("# Sales"),
            new_code_cell("sales = [3, 5, 8]\ntotal = sum(sales)\ntotal", execution_count=1,
                          outputs=[new_output("execute_result", data={"text/plain": "16"},
                                              execution_count=1)]),
            new_code_cell("%%bash\necho done", execution_count=2,
                          outputs=[new_output("stream", name="stdout", text="done\nok\n")]),
            new_code_cell("print(total)\nprint(total)"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}},
    )
    path = root / "analysis.ipynb"
    nbformat.write(notebook, path)
    return path


async def test_read_lists_a_notebooks_cells_with_their_outputs(runtime, root):
    _write_analysis(root)
    run = await runtime.create_run()
    result = await run.call("read", {"path": "analysis.ipynb"})
    assert result.ok
    ids = [cell["id"] for cell in result.data["cells"]]
    assert all(ids) and len(set(ids)) == 4
    assert result.text.splitlines()[:9] == [
        "analysis.ipynb: python notebook, 4 cells",
        f"[cell 1, id {ids[0]}] markdown",
        "1\t# Sales",
        f"[cell 2, id {ids[1]}] code, python, run [1]",
        "1\tsales = [3, 5, 8]",
        "2\ttotal = sum(sales)",
        "3\ttotal",
        "  outputs: execute_result text/plain (2 bytes)",
        f"[cell 3, id {ids[2]}] code, bash (%%bash), run [2]",
    ]
    assert result.data["total_cells"] == 4 and result.data["language"] == "python"
    assert [cell["cell"] for cell in result.data["cells"]] == [1, 2, 3, 4]
    assert result.data["cells"][2]["outputs"] == [
        {"output_type": "stream", "kinds": ["stdout"], "size": 8}]


async def test_read_pages_a_notebook_by_cells_and_shows_outputs_on_request(runtime, root):
    _write_analysis(root)
    run = await runtime.create_run()
    page = await run.call("read", {"path": "analysis.ipynb", "offset": 3, "limit": 1,
                                   "outputs": True})
    assert page.text.splitlines()[1:7] == [
        f"[cell 3, id {page.data['cells'][0]['id']}] code, bash (%%bash), run [2]",
        "1\t%%bash", "2\techo done",
        "  output 1: stream stdout (8 chars)", "  | done", "  | ok"]
    assert "offset=4" in page.text
    assert (page.data["start_cell"], page.data["end_cell"]) == (3, 3)
    assert page.data["cells"][0]["outputs"][0]["text"] == "done\nok\n"


async def test_read_shows_a_broken_notebook_as_text_to_repair_it(runtime, root):
    (root / "broken.ipynb").write_text('{"cells": [\n')
    run = await runtime.create_run()
    result = await run.call("read", {"path": "broken.ipynb"})
    assert result.ok and result.text.startswith('1\t{"cells": [')
    assert "shown as text: broken.ipynb is not valid JSON" in result.text


async def test_edit_changes_one_cell_and_nothing_else(runtime, root):
    path = _write_analysis(root)
    before = path.read_bytes()
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "analysis.ipynb", "cell": 2,
                                     "old_string": "sum(sales)", "new_string": "max(sales)"})
    assert result.ok, result.error
    assert result.text.startswith("Replaced 1 occurrence in analysis.ipynb [cell 2] 2:9.")
    assert {key: result.data[key] for key in ("path", "cell", "line", "column")} == {
        "path": "analysis.ipynb", "cell": 2, "line": 2, "column": 9}
    # Outputs, ids, metadata and formatting: byte for byte what they were.
    assert path.read_bytes() == before.replace(b"sum(sales)", b"max(sales)")
    assert result.data["formatting_kept"] is True


async def test_edit_says_when_a_notebooks_odd_spacing_was_normalized(runtime, root):
    path = _write_analysis(root)
    path.write_text(path.read_text().replace('"cells": [', '"cells" :[', 1))
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "analysis.ipynb", "cell": 2,
                                     "old_string": "sum", "new_string": "max"})
    assert result.ok and result.data["formatting_kept"] is False
    assert "written as nbformat writes it" in result.text
    assert '"cells": [' in path.read_text()


async def test_edit_in_a_notebook_is_addressed_by_cell(runtime, root):
    path = _write_analysis(root)
    before = path.read_bytes()
    run = await runtime.create_run()
    edit = {"path": "analysis.ipynb", "old_string": "print(total)", "new_string": "total"}
    missing = await run.call("edit", edit)
    assert missing.code == "invalid_arguments" and "name the cell" in missing.error["message"]
    elsewhere = await run.call("edit", {**edit, "cell": 2})
    assert elsewhere.code == "not_found" and "It occurs in cell 4" in elsewhere.error["message"]
    twice = await run.call("edit", {**edit, "cell": 4})
    assert twice.code == "invalid_arguments" and "lines 1, 2 of the cell" in twice.error["message"]
    beyond = await run.call("edit", {**edit, "cell": 9})
    assert beyond.code == "invalid_arguments" and "has 4 cells" in beyond.error["message"]
    assert path.read_bytes() == before
    every = await run.call("edit", {**edit, "cell": 4, "replace_all": True})
    assert every.ok and every.data["replacements"] == 2


async def test_a_cell_on_a_plain_file_is_refused(runtime, root):
    (root / "a.py").write_text("x = 1\n")
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "a.py", "cell": 1, "old_string": "x",
                                     "new_string": "y"})
    assert result.code == "invalid_arguments" and "a plain file" in result.error["message"]
    assert (root / "a.py").read_text() == "x = 1\n"


async def test_write_of_a_notebook_must_be_valid_nbformat(runtime, root):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    run = await runtime.create_run()
    bad = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                      "cells": [{"cell_type": "code", "source": "x", "metadata": {}}]})
    refused = await run.call("write", {"path": "new.ipynb", "content": bad})
    assert refused.code == "invalid_arguments"
    assert "not a valid nbformat 4 notebook: at cells/0" in refused.error["message"]
    assert not (root / "new.ipynb").exists()
    not_json = await run.call("write", {"path": "new.ipynb", "content": "cells: []"})
    assert not_json.code == "invalid_arguments" and "not valid JSON" in not_json.error["message"]
    good = nbformat.writes(new_notebook(cells=[new_code_cell("x = 1")]))
    assert (await run.call("write", {"path": "new.ipynb", "content": good})).ok
    assert (await run.call("read", {"path": "new.ipynb"})).data["cells"][0]["lines"] == 1


async def test_a_deno_notebook_is_read_and_edited_in_typescript(runtime, root):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nbformat.write(new_notebook(
        cells=[new_code_cell("const prices = [3, 5, 8];"),
               new_code_cell("prices.filter((p) =>\n  p % 2 === 1)")],
        metadata={"kernelspec": {"name": "deno", "display_name": "Deno",
                                 "language": "typescript"}}), root / "prices.ipynb")
    run = await runtime.create_run()
    listing = await run.call("read", {"path": "prices.ipynb"})
    assert listing.text.splitlines()[:3] == [
        "prices.ipynb: typescript notebook, 2 cells",
        f"[cell 1, id {listing.data['cells'][0]['id']}] code, typescript",
        "1\tconst prices = [3, 5, 8];"]
    edited = await run.call("edit", {"path": "prices.ipynb", "cell": 2,
                                     "old_string": "p % 2", "new_string": "p % 3"})
    assert edited.ok and "[cell 2] 2:3" in edited.text
    assert nbformat.read(root / "prices.ipynb", as_version=4).cells[1].source.endswith("p % 3 === 1)")


def _write_plotted(root: Path) -> Path:
    """A 5 MB notebook (a big plot and a long log among its outputs): over max_read_bytes."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    plot = "iVBORw0KGgo" * 460_000
    log = "".join(f"epoch {i}: loss {1 / (i + 1):.4f}\n" for i in range(5_000))
    notebook = new_notebook(cells=[
        new_code_cell("losses = train(model)\nplot(losses)", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text=log),
                               new_output("display_data", data={"image/png": plot,
                                                                "text/plain": "<Figure>"})]),
        new_code_cell("print(losses[-1])"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    path = root / "training.ipynb"
    nbformat.write(notebook, path)
    return path


async def test_a_notebook_over_the_read_limit_is_read_edited_and_grepped(runtime, root):
    # With language servers: the diagnostics after the edit read the notebook within
    # max_notebook_bytes too.
    path = _write_plotted(root)
    assert path.stat().st_size > 5_000_000 > runtime.max_read_bytes
    run = await runtime.create_run()
    second = await run.call("read", {"path": "training.ipynb", "offset": 2, "limit": 1})
    assert second.ok, second.text
    assert "[cell 2, id " in second.text and "1\tprint(losses[-1])" in second.text
    # The outputs' text in full stays within the read bounds: max_line_chars per line, and
    # the base64 plot is summarized, never printed.
    full = await run.call("read", {"path": "training.ipynb", "limit": 1, "outputs": True})
    assert full.ok and "image/png" in full.text and "iVBORw0KGgo" not in full.text
    assert len(full.text) < 200_000
    edited = await run.call("edit", {"path": "training.ipynb", "cell": 2,
                                     "old_string": "print", "new_string": "log"})
    assert edited.ok, edited.text
    for where in ({}, {"path": "training.ipynb"}):  # a folder's notebooks, or the one named
        found = await run.call("grep", {"pattern": r"log\(losses", **where})
        assert found.ok and found.data["matches"] == [
            {"file": "training.ipynb", "line": 1, "text": "log(losses[-1])", "cell": 2}]
    runtime.max_notebook_bytes = 1_000_000
    refused = await run.call("read", {"path": "training.ipynb"})
    assert refused.code == "failed" and "1000000-byte limit" in refused.error["message"]
