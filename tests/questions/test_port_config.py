"""The question port's renamed config: the old name still works for one release."""

from __future__ import annotations

import logging

from traitlets.config import Config

from jupyter_agent_tools.questions import QuestionPort


def test_closed_cards_kept_still_sets_max_closed_cards(caplog):
    config = Config()
    config.QuestionPort.closed_cards_kept = 3
    with caplog.at_level(logging.WARNING):
        port = QuestionPort(config=config, log=logging.getLogger("questions"))
    assert port.max_closed_cards == 3
    assert "QuestionPort.closed_cards_kept is deprecated" in caplog.text
    assert "use QuestionPort.max_closed_cards" in caplog.text
