"""lsp hover answers the signature and the documentation's first paragraph as plain Markdown
(a real ty over the installed pandas); `full: true` gives the rest."""

from __future__ import annotations

import html

from test_python_ty import DEFAULT_INSTALL


async def test_hover_is_brief_and_plain_unless_asked_for_all(lsp_runtime, root):
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'sales'\nversion = '0'\n")
    (project / "report.py").write_text(
        "import pandas as pd\n\ndf = pd.DataFrame({'region': ['n', 's'], 'sales': [3, 5]})\n"
        "totals = df.groupby('region').sum()\n")
    run = await lsp_runtime(**DEFAULT_INSTALL).create_run(cwd="proj")

    brief = await run.call("lsp", {"action": "hover", "file": "report.py", "line": 4,
                                   "symbol": "groupby"})
    assert brief.ok, brief.text
    full = await run.call("lsp", {"action": "hover", "file": "report.py", "line": 4,
                                  "symbol": "groupby", "full": True})
    assert full.ok and full.data["full"] is True, full.text
    # The whole pandas docstring is long; the default is the signature and one paragraph.
    assert len(full.text) > 3_000
    assert brief.data["full"] is False and len(brief.text) < 1_300  # under ~300 tokens
    assert brief.text.startswith("```") and "def groupby(" in brief.text
    assert "hover with full: true" in brief.text
    assert brief.data["hover"] in full.text.replace("\n\n---\n\n", "\n\n") or \
        brief.data["hover"].split("```")[-1].strip() in full.text
    for answer in (brief.text, full.text):
        assert "&nbsp;" not in answer and html.unescape(answer) == answer
    strict = await run.call("lsp", {"action": "hover", "file": "report.py", "line": 4,
                                    "symbol": "groupby", "full": "yes"})
    assert strict.code == "invalid_arguments"
