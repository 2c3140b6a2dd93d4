"""The documentation's generated pages (docs/_ext/agent_tools_docs.py) cover what the code
defines: every setting of every configurable class with its help text, every built-in tool on a
tool page, every HTTP route. Checked from the sources Sphinx reads, without building the site
(`make docs` builds it, warnings as errors)."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest
from traitlets.config import Configurable

import jupyter_agent_tools
from jupyter_agent_tools.http.openapi import openapi_document
from jupyter_agent_tools.runtime.registry import ToolRegistry
from jupyter_agent_tools.runtime.runtime import BUILTIN_TOOLS

DOCS = Path(__file__).parents[1] / "docs"


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("agent_tools_docs", DOCS / "_ext" / "agent_tools_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _all_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def _package_configurables() -> list[type[Configurable]]:
    """Found apart from the generator: every module imported, then Configurable's subclasses."""
    for info in pkgutil.walk_packages(jupyter_agent_tools.__path__, "jupyter_agent_tools."):
        if not info.name.startswith(("jupyter_agent_tools.demo.sample_project",
                                     "jupyter_agent_tools.testing")):
            importlib.import_module(info.name)
    return [cls for cls in _all_subclasses(Configurable)
            if cls.__module__.startswith("jupyter_agent_tools.")]


def test_the_configuration_page_lists_every_setting_with_its_help(generator):
    page = generator.configuration_page()
    settings = [(cls, name, trait) for cls in _package_configurables()
                for name, trait in cls.class_own_traits(config=True).items()]
    assert len(settings) > 100  # the runtime's own are about 40: the walk found the classes
    missing = [f"c.{cls.__name__}.{name}" for cls, name, _ in settings
               if f"`c.{cls.__name__}.{name}`" not in page]
    assert missing == [], "settings missing from docs/_generated/configuration.md"
    without_help = [f"c.{cls.__name__}.{name}" for cls, name, trait in settings
                    if not (trait.help or "").strip()]
    assert without_help == [], "every setting needs help text: it is its documentation"


def test_every_builtin_tool_has_a_reference_on_a_tool_page(generator):
    pages = generator.tool_pages()
    registry = ToolRegistry()
    registry.load(BUILTIN_TOOLS)
    assert set(pages) == {tool.name for tool in registry}
    for tool in registry:
        for field in tool.Args.model_fields:
            assert f"| `{field}` |" in pages[tool.name], (tool.name, field)
        for field in set(tool.Output.model_fields) - {"error"}:  # the result's keys too
            assert f"| `{field}` |" in pages[tool.name].split("Result:")[1], (tool.name, field)
    included = "".join(page.read_text() for page in (DOCS / "tools").glob("*.md"))
    not_included = [name for name in pages if f"_generated/tools/{name}.md" not in included]
    assert not_included == [], "a tool without a section on a docs/tools/ page"


def test_the_http_reference_lists_every_route_and_model(generator):
    document = openapi_document()
    page = generator.http_models_page(document)
    for path, operations in document["paths"].items():
        for method in operations:
            if method != "parameters":
                assert f"`{method.upper()} {path}`" in page
    for model in document["components"]["schemas"]:
        assert f"### {model}\n" in page
