"""Pages generated from the code at build time, so that they cannot drift from it.

- `_generated/configuration.md`: every traitlet of every configurable class the package
  defines (name, type, default, help), found by importing the package's modules.
- `_generated/openapi.json`: the HTTP API's OpenAPI document (`http/openapi.py`), which
  `http.md` renders with sphinxcontrib-openapi; `_generated/http-models.md`: the bodies and
  answers of each route and the fields of every model in `components/schemas`.
- `_generated/tools/NAME.md`: each built-in tool's tier, description and arguments, from its
  `Tool` class and its pydantic `Args` model (what `tools/list` hands an agent).

`write_generated_pages(docs_dir)` writes them all; the Sphinx hook calls it before reading.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

from traitlets.config import Configurable

PACKAGE = "jupyter_agent_tools"
# Not part of the extension: the tour's sample project (data) and the pytest plugin (needs pytest).
SKIPPED_MODULES = (f"{PACKAGE}.demo.sample_project", f"{PACKAGE}.testing")
GENERATED = "_generated"


def package_modules() -> list[Any]:
    """Every module of the package, imported (the sample project and test helpers left out)."""
    package = importlib.import_module(PACKAGE)
    names = [info.name for info in pkgutil.walk_packages(package.__path__, PACKAGE + ".")
             if not info.name.startswith(SKIPPED_MODULES)]
    return [importlib.import_module(name) for name in sorted(names)]


def configurable_classes() -> list[type[Configurable]]:
    """The package's configurable classes that declare settings of their own, by name."""
    found: dict[str, type[Configurable]] = {}
    for module in package_modules():
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Configurable)
                    and value.__module__.startswith(PACKAGE)
                    and value.class_own_traits(config=True)):
                found[value.__name__] = value
    return [found[name] for name in sorted(found)]


def _markdown_text(text: str) -> str:
    """Help text as one MyST paragraph: markup characters that help text uses literally escaped."""
    text = " ".join(text.split())
    for char in ("\\", "*", "<", "[", "]", "|"):
        text = text.replace(char, "\\" + char)
    return text


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _configurable_bases(cls: type[Configurable]) -> list[str]:
    return [base.__name__ for base in cls.__mro__[1:]
            if base.__module__.startswith(PACKAGE) and issubclass(base, Configurable)
            and base.class_own_traits(config=True)]


def configuration_page() -> str:
    """The configuration reference: a section per class, an entry per traitlet."""
    lines = [
        "## Every setting",
        "",
        "Generated from the code when the documentation is built: every setting of every "
        "configurable class of the extension. Set them in `jupyter_server_config.py` "
        "(`c.Runtime.max_output_chars = 50000`) or on the command line "
        "(`--Runtime.max_output_chars=50000`).",
        "",
    ]
    for cls in configurable_classes():
        lines += [f"### `{cls.__name__}`", ""]
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        if doc:
            lines += [_markdown_text(doc), ""]
        lines += [f"Defined in `{cls.__module__}`.", ""]
        inherited = _configurable_bases(cls)
        if inherited:
            lines += ["Also takes the settings of " + ", ".join(f"`{name}`" for name in inherited)
                      + f" (as `c.{cls.__name__}.<name>`).", ""]
        for name, trait in sorted(cls.class_own_traits(config=True).items()):
            renamed_to = trait.metadata.get("renamed_to")
            kind = type(trait).__name__
            lines.append(f"`c.{cls.__name__}.{name}`")
            if renamed_to:
                lines.append(f": *deprecated:* use `c.{cls.__name__}.{renamed_to}`. "
                             + _markdown_text(trait.help))
            else:
                default = trait.default_value_repr()
                lines.append(f": {kind}, default {_code(default)}. " + _markdown_text(trait.help))
            lines.append("")
    return "\n".join(lines)


def _schema_type(schema: dict[str, Any]) -> str:
    """A short type for a JSON Schema: `string`, `integer | null`, `RunInfo`, `array of Card`."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " | ".join(_schema_type(part) for part in schema[union])
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type", "any")
    if kind == "object" and schema.get("title"):  # a model inlined in a tool's schema
        return str(schema["title"])
    if kind == "array":
        return "array of " + _schema_type(schema.get("items", {}))
    if isinstance(kind, list):
        return " | ".join(kind)
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _fields_table(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return [f"Type: {_cell(_schema_type(schema))}.", ""]
    required = set(schema.get("required", []))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for field, spec in properties.items():
        rows.append(f"| `{field}` | {_cell(_schema_type(spec))} | "
                    f"{'yes' if field in required else ''} | "
                    f"{_cell(_markdown_text(spec.get('description', '')))} |")
    return [*rows, ""]


def _content_schema(body: dict[str, Any]) -> str | None:
    for media in body.get("content", {}).values():
        if "schema" in media:
            return _schema_type(media["schema"])
    return None


def _linked_models(text: str, models: set[str]) -> str:
    """Model names in a table cell linked to their section below (`#runrequest`)."""
    return re.sub(r"\b[A-Z]\w+\b",
                  lambda m: f"[{m.group(0)}](#{m.group(0).lower()})" if m.group(0) in models
                  else m.group(0), text)


def http_models_page(document: dict[str, Any]) -> str:
    """Each route's body and answers, then every model's fields, from the OpenAPI document."""
    models = set(document["components"]["schemas"])
    lines = ["## Bodies and answers", "",
             "| route | body | answers |", "|---|---|---|"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            body = _content_schema(operation.get("requestBody", {})) or ""
            answers = []
            for status, response in operation.get("responses", {}).items():
                schema = _content_schema(response)
                answers.append(f"{status}" + (f" {schema}" if schema else ""))
            lines.append(f"| `{method.upper()} {path}` | {_linked_models(_cell(body), models)} | "
                         f"{_linked_models(_cell(', '.join(answers)), models)} |")
    lines += ["", "## Models", ""]
    for name, schema in sorted(document["components"]["schemas"].items()):
        lines += [f"### {name}", ""]
        if schema.get("description"):
            lines += [_markdown_text(schema["description"]), ""]
        lines += _fields_table(schema)
    return "\n".join(lines)


def tool_pages() -> dict[str, str]:
    """A reference section per built-in tool: tier, description, argument and result fields."""
    from jupyter_agent_tools.runtime.registry import ToolRegistry
    from jupyter_agent_tools.runtime.runtime import BUILTIN_TOOLS
    from jupyter_agent_tools.runtime.schemas import tool_schema
    from jupyter_agent_tools.runtime.tool import Tool

    registry = ToolRegistry()
    registry.load(BUILTIN_TOOLS)
    pages = {}
    for tool in registry:
        schema = tool_schema(tool, "json")
        tier = f"Tier: `{tool.tier.value}`"
        if type(tool).call_tier is not Tool.call_tier:
            tier += " (a run sees it at this tier; each call is approved at its action's, which may be lower)"
        lines = [f"### `{tool.name}` reference", "",
                 f"{tier}. What the agent reads in `tools/list`:", "",
                 "```text", tool.description.strip(), "```", "",
                 "Arguments:", ""]
        lines += _fields_table(schema.get("input_schema") or schema.get("parameters") or schema)
        lines += ["Result: what `data` (MCP's `structuredContent`, its `outputSchema`) may carry; "
                  "a failed call's has `error: {code, message}`.", ""]
        output = schema["output_schema"]
        lines += _fields_table({"properties": {name: spec for name, spec in
                                               output["properties"].items() if name != "error"}})
        pages[tool.name] = "\n".join(lines)
    return pages


def _write_if_changed(path: Path, text: str) -> None:
    """Unchanged pages keep their time, so Sphinx does not re-read them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_generated_pages(docs_dir: Path) -> None:
    from jupyter_agent_tools.http.openapi import openapi_document

    out = docs_dir / GENERATED
    _write_if_changed(out / "configuration.md", configuration_page())
    document = openapi_document()
    _write_if_changed(out / "openapi.json", json.dumps(document, indent=1, sort_keys=True))
    _write_if_changed(out / "http-models.md", http_models_page(document))
    for name, text in tool_pages().items():
        _write_if_changed(out / "tools" / f"{name}.md", text)


def _on_builder_inited(app: Any) -> None:
    write_generated_pages(Path(app.srcdir))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
