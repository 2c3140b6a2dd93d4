"""The language of a notebook (its kernel's) and of each cell (cell magics)."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.notebooks import cell_language, notebook_language


@pytest.mark.parametrize("metadata, language", [
    ({"kernelspec": {"name": "python3", "language": "python"}}, "python"),
    ({"kernelspec": {"name": "deno", "language": "typescript"}}, "typescript"),
    ({"kernelspec": {"name": "javascript"}, "language_info": {"name": "JavaScript"}}, "javascript"),
    ({"language_info": {"name": "R"}}, "r"),
    ({}, "python"),
])
def test_the_notebook_speaks_its_kernels_language(metadata, language):
    assert notebook_language(metadata) == language


@pytest.mark.parametrize("source, name, in_kernel, magic", [
    ("x = 1", "python", True, None),
    ("%%time\nx = 1", "python", True, "time"),
    ("%%bash\nls", "bash", False, "bash"),
    ("%%javascript\nalert(1)", "javascript", False, "javascript"),
    ("%%script /usr/bin/python3\nprint(1)", "python", False, "script"),
    ("%%writefile data.csv\na,b", None, False, "writefile"),
    ("%%some_extension_magic\n???", None, False, "some_extension_magic"),
])
def test_a_cell_magic_says_what_the_cell_is(source, name, in_kernel, magic):
    language = cell_language("code", source, "python")
    assert (language.name, language.runs_in_kernel, language.magic) == (name, in_kernel, magic)


def test_only_ipython_has_cell_magics_and_only_code_cells_have_a_language():
    assert cell_language("code", "%%bash\nls", "typescript").name == "typescript"
    assert cell_language("markdown", "%%bash", "python").name is None
