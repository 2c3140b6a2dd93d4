"""The ipywidgets front end: question and permission cards, staged-edit diffs, a live transcript.

`AgentPanel` is the composition; `ServerLink` feeds it from a Jupyter server and carries the
clicks back. Notebook users call `jupyter_agent_tools.notebook.open_panel()`.
"""

from .actions import Outcome, PanelActions
from .cards import CardView
from .edits import StagedEditView, diff_html
from .panel import AgentPanel
from .transcript import TranscriptView

__all__ = ["AgentPanel", "CardView", "Outcome", "PanelActions", "StagedEditView", "TranscriptView", "diff_html"]
