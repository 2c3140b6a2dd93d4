"""Real notebooks, written with nbformat as JupyterLab saves them: Python and Deno (TypeScript)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def _python_notebook() -> nbformat.NotebookNode:
    """An analysis notebook: markdown, magics, shell escapes, outputs of every kind."""
    return new_notebook(
        cells=[
            new_markdown_cell("# Sales analysis\nLoad, clean, plot.",
                              attachments={"chart.png": {"image/png": PNG_BASE64}}),
            new_code_cell(
                "import pandas as pd\n%matplotlib inline\nfiles = !ls data\nsales = load(files)",
                execution_count=1,
                outputs=[new_output("stream", name="stdout", text="loaded 3 files\n")]),
            new_code_cell("%%bash\necho $HOME", execution_count=2,
                          outputs=[new_output("stream", name="stdout", text="/root\n")]),
            new_code_cell(
                "%%time\ntotal = sales.sum()\ntotal", execution_count=3,
                outputs=[
                    new_output("execute_result", data={"text/plain": "42"}, execution_count=3),
                    new_output("display_data", data={"image/png": PNG_BASE64,
                                                     "text/plain": "<Figure>"}),
                ]),
            new_code_cell("pd.DataFrame?\nratio = (total\n         % 7)", execution_count=4,
                          outputs=[new_output("error", ename="NameError",
                                              evalue="name 'load' is not defined",
                                              traceback=["Traceback..."])]),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "version": "3.11.7"},
            "custom": {"zeta": 1, "alpha": [1.5, "é"]},
        },
    )


def _deno_notebook() -> nbformat.NotebookNode:
    """A notebook of the Deno kernel: TypeScript cells, where `%` is only an operator."""
    return new_notebook(
        cells=[
            new_markdown_cell("Prices"),
            new_code_cell("const prices: number[] = [3, 5, 8];"),
            new_code_cell("const odd = prices.filter((p) =>\n  p\n  % 2 === 1);\nodd"),
        ],
        metadata={
            "kernelspec": {"name": "deno", "display_name": "Deno", "language": "typescript"},
            "language_info": {"name": "typescript", "file_extension": ".ts"},
        },
    )


@pytest.fixture
def python_notebook() -> nbformat.NotebookNode:
    return _python_notebook()


@pytest.fixture
def deno_notebook() -> nbformat.NotebookNode:
    return _deno_notebook()


@pytest.fixture
def analysis(root: Path) -> Path:
    """`analysis.ipynb` in the root, saved as JupyterLab does (nbformat.write)."""
    path = root / "analysis.ipynb"
    nbformat.write(_python_notebook(), path)
    return path


@pytest.fixture
def prices(root: Path) -> Path:
    path = root / "prices.ipynb"
    nbformat.write(_deno_notebook(), path)
    return path
