"""Sphinx configuration: MyST pages, the PyData theme, and pages generated from the code
(docs/_ext/agent_tools_docs.py). Builds offline: no intersphinx, no remote assets."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).parent
sys.path.insert(0, str(DOCS / "_ext"))
# The package documented is the checkout's, even when another copy is installed.
sys.path.insert(0, str(DOCS.parent))

from jupyter_agent_tools._version import __version__  # noqa: E402

project = "jupyter-agent-tools"
author = "jupyter-agent-tools contributors"
copyright = "jupyter-agent-tools contributors"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinxcontrib.openapi",
    "agent_tools_docs",
]
myst_enable_extensions = ["deflist"]
# `getting-started.md#jupyter-ai`-style links to headings.
myst_heading_anchors = 3
exclude_patterns = ["_build", "_generated/tools/*.md", "_generated/configuration.md",
                    "_generated/http-models.md"]
# Code and option names stay as written (`--timeout`, not an en dash).
smartquotes = False

html_theme = "pydata_sphinx_theme"
html_title = "jupyter-agent-tools"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    # The page outline shows a reference page's sections (each class, each model) too.
    "show_toc_level": 2,
    # No version switcher, analytics or icon links: nothing is fetched when a page is viewed.
    "icon_links": [],
}
