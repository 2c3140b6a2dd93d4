"""Renamed config names: the old name still sets the new one, and says so in the log."""

from __future__ import annotations

import logging
from typing import ClassVar

from traitlets import Float
from traitlets.config import Application, Config, LoggingConfigurable

from jupyter_agent_tools.runtime.config import RenamedConfig, renamed_to


class Limits(RenamedConfig, LoggingConfigurable):
    request_timeout_seconds = Float(10.0, config=True, help="How long a request may take.")
    request_timeout = renamed_to("request_timeout_seconds", Float)


def test_the_old_name_sets_the_new_one_and_logs_what_to_write(caplog):
    config = Config()
    config.Limits.request_timeout = 3.5
    with caplog.at_level(logging.WARNING):
        limits = Limits(config=config, log=logging.getLogger("limits"))
    assert limits.request_timeout_seconds == 3.5
    assert "Limits.request_timeout is deprecated" in caplog.text
    assert "use Limits.request_timeout_seconds" in caplog.text


def test_the_new_name_alone_logs_nothing(caplog):
    config = Config()
    config.Limits.request_timeout_seconds = 2.0
    with caplog.at_level(logging.WARNING):
        limits = Limits(config=config, log=logging.getLogger("limits"))
    assert limits.request_timeout_seconds == 2.0 and limits.request_timeout is None
    assert caplog.text == ""


def test_the_old_name_parses_from_the_command_line_like_the_new_one():
    class App(Application):
        classes: ClassVar = [Limits]

    app = App()
    app.parse_command_line(["--Limits.request_timeout=7"])
    assert Limits(config=app.config).request_timeout_seconds == 7.0
