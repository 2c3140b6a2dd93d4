"""nbformat 3 notebooks' cells in nbformat 4's shape, for searches, without nbformat.

Searches read notebooks where nbformat cannot be imported cheaply (it takes seconds) or at
all (grep's threads are confined to the root). Cells come out as nbformat's own upgrade
(`nbformat.v4.convert.upgrade_cell`) makes them, so a search places a match at the cell and
line `read` shows (read upgrades with nbformat itself): worksheets flattened in order, a
code cell's `input` as its source, a heading cell as a one-line markdown `# ...`.
"""

from __future__ import annotations

from typing import Any


def is_nbformat3(data: Any) -> bool:
    """Whether parsed JSON is an nbformat 3 notebook (cells in worksheets)."""
    return (isinstance(data, dict) and data.get("nbformat") == 3
            and isinstance(data.get("worksheets"), list))


def cells_as_v4(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells of an nbformat 3 notebook, each as nbformat 4 has it (type, source as a
    string, metadata; a code cell's outputs and execution count). TypeError, KeyError or
    AttributeError when they are not nbformat 3's."""
    cells = []
    for worksheet in data["worksheets"]:
        for cell in worksheet["cells"]:
            cell_type = cell["cell_type"]
            upgraded: dict[str, Any] = {"metadata": cell.get("metadata", {})}
            if cell_type == "code":
                upgraded.update(cell_type="code", source=_joined(cell.get("input", "")),
                                outputs=cell.get("outputs", []),
                                execution_count=cell.get("prompt_number"))
            elif cell_type == "heading":
                single_line = " ".join(_joined(cell.get("source", "")).splitlines())
                upgraded.update(cell_type="markdown",
                                source=f"{'#' * cell.get('level', 1)} {single_line}")
            else:  # markdown, raw; html cells became markdown
                upgraded.update(cell_type="markdown" if cell_type == "html" else cell_type,
                                source=_joined(cell.get("source", "")))
            cells.append(upgraded)
    return cells


def _joined(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)
