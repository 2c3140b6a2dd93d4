"""Renamed config names: the old name still sets the new one, and says so in the log."""

from __future__ import annotations

import ast
import logging
from pathlib import Path
from typing import ClassVar

from traitlets import Float
from traitlets.config import Application, Config, LoggingConfigurable

import jupyter_agent_tools
from jupyter_agent_tools.runtime import Runtime
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


# -- the runtime's own renamed names (issue 16) ------------------------------------------------

RUNTIME_RENAMES = {
    "read_max_lines": "max_read_lines", "read_max_bytes": "max_read_bytes",
    "grep_max_results": "max_grep_results", "glob_max_results": "max_glob_results",
    "grep_max_output_bytes": "max_grep_output_bytes", "grep_max_concurrent": "max_concurrent_greps",
    "search_max_argument_chars": "max_search_argument_chars",
    "walk_max_entries": "max_walk_entries", "bash_max_timeout_seconds": "max_bash_timeout_seconds",
    "bash_memory_limit_mb": "max_bash_memory_mb",
}


def _renamed_traits(cls: type) -> dict[str, str]:
    return {name: trait.metadata["renamed_to"] for name, trait in cls.class_traits().items()
            if "renamed_to" in trait.metadata}


def test_every_old_runtime_name_still_configures_its_new_one(tmp_path, caplog):
    assert _renamed_traits(Runtime) == RUNTIME_RENAMES
    config = Config()
    for number, old in enumerate(RUNTIME_RENAMES, start=1):
        setattr(config.Runtime, old, 1000 + number)
    with caplog.at_level(logging.WARNING):
        runtime = Runtime(config=config, root_dir=str(tmp_path), resource_providers=[],
                          log=logging.getLogger("runtime"))
    for number, (old, new) in enumerate(RUNTIME_RENAMES.items(), start=1):
        assert getattr(runtime, new) == 1000 + number
        assert f"Runtime.{old} is deprecated and will be removed: use Runtime.{new}" in caplog.text


def test_no_module_of_the_package_reads_an_old_name():
    """An old name is None unless configured: code must read the new one (a merge that
    brings back `runtime.read_max_bytes` would read None)."""
    package = Path(jupyter_agent_tools.__file__).parent
    old_names = set(RUNTIME_RENAMES)
    readers = sorted(
        f"{path.relative_to(package)}:{node.lineno} .{node.attr}"
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in old_names
    )
    assert readers == []
