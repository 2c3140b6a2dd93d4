"""Reading a notebook under the root and writing back sources: contained, and never stale."""

from __future__ import annotations

import nbformat
import pytest

from jupyter_agent_tools.files import FilesError
from jupyter_agent_tools.notebooks import StaleNotebook, read_notebook, write_sources
from jupyter_agent_tools.runtime.file_errors import file_error


def test_write_back_changes_the_cell_and_nothing_else(root, analysis):
    before = analysis.read_bytes()
    file = read_notebook(root, analysis, shown="analysis.ipynb")
    written = write_sources(root, file, {2: file.notebook.cell(2).source.replace("load", "read")})
    assert analysis.read_bytes() == written
    assert written == before.replace(b'"sales = load(files)"', b'"sales = read(files)"')


def test_a_notebook_saved_meanwhile_is_not_overwritten(root, analysis):
    file = read_notebook(root, analysis, shown="analysis.ipynb")
    saved = nbformat.read(analysis, as_version=4)  # the human saves from JupyterLab
    saved.cells[1].source += "\nprint(sales)"
    nbformat.write(saved, analysis)
    after_save = analysis.read_bytes()
    with pytest.raises(StaleNotebook, match="changed on disk since it was read"):
        write_sources(root, file, {2: "x = 1"})
    assert analysis.read_bytes() == after_save


def test_an_in_place_rewrite_with_other_content_is_stale_too(root, analysis):
    file = read_notebook(root, analysis)
    with open(analysis, "r+b") as handle:  # same inode, other bytes
        handle.write(handle.read().replace(b"Sales", b"Costs"))
    with pytest.raises(StaleNotebook):
        write_sources(root, file, {2: "x = 1"})


def test_a_link_out_of_the_root_is_not_followed(root, tmp_path):
    outside = tmp_path / "outside.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), outside)
    (root / "linked.ipynb").symlink_to(outside)
    with pytest.raises(FilesError) as caught:
        read_notebook(root, root / "linked.ipynb")
    assert file_error(caught.value).code.value == "path_outside_root"
