"""A notebook as a source file: its cells by number, and writing back only changed sources.

The JSON is kept as parsed (key order included) beside how the file was formatted, so a
change of cell sources re-serializes to the very same bytes everywhere else: outputs,
metadata, ids, attachments, indentation, escaping, line endings and the final newline.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .errors import CellOutOfRange, InvalidNotebook, UnknownCellId
from .language import CellLanguage, cell_language, notebook_language

if TYPE_CHECKING:
    import nbformat

NOTEBOOK_SUFFIX = ".ipynb"

# How a tool names a cell: its number (from 1, as JupyterLab's status bar counts) or its
# nbformat cell id.
CellRef = int | str

# json.dumps' separators: nbformat writes the first; the others are common hand/tool styles.
_SEPARATORS = ((",", ": "), (", ", ": "), (",", ":"))
_FIRST_INDENT = re.compile(r"\A\{\r?\n([ \t]*)\S")


def is_notebook_path(name: str) -> bool:
    """Whether a file is treated as a notebook (by its suffix, as Jupyter does)."""
    return name.lower().endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class JsonStyle:
    """How a notebook file is formatted, enough to write it again the same way."""

    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    newline: str
    trailing_newline: bool
    # Whether dumping the parsed file in this style gave back its very bytes; when not
    # (hand-made spacing, float spellings), a write normalizes the formatting.
    exact: bool = True

    def dumps(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, separators=self.separators,
                          ensure_ascii=self.ensure_ascii)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)  # JSON strings escape theirs: all structural
        return text + self.newline if self.trailing_newline else text

    @classmethod
    def of(cls, text: str, data: Any) -> JsonStyle:
        """The style that reproduces `text` from `data`; the likeliest one when none does."""
        match = _FIRST_INDENT.match(text)
        indent: int | str | None = None
        if match is not None:
            spaces = match.group(1)
            indent = len(spaces) if spaces.strip(" ") == "" else spaces
        newline = "\r\n" if "\r\n" in text else "\n"
        trailing = text.endswith(newline)
        candidates = [
            cls(indent, separators, ensure_ascii, newline, trailing)
            for ensure_ascii in (False, True) for separators in _SEPARATORS
        ]
        for style in candidates:
            if style.dumps(data) == text:
                return style
        # An all-ASCII file likely escapes what is not: new sources are escaped the same way.
        return cls(indent, _SEPARATORS[0], text.isascii(), newline, trailing, exact=False)


@dataclass(frozen=True)
class OutputSummary:
    """One output of a code cell, summarized: what it is and how big."""

    output_type: str  # stream | execute_result | display_data | error
    kinds: tuple[str, ...]  # stream name, MIME types, or the exception name
    size: int  # characters of text, or bytes of the largest data item
    text: str | None  # the text form, when the output has one

    def line(self) -> str:
        """A one-line description, e.g. `display_data image/png, text/plain (24,310 bytes)`."""
        kinds = ", ".join(self.kinds)
        if self.output_type == "error":
            return f"error {self.text or kinds}".splitlines()[0]
        unit = "chars" if self.output_type == "stream" else "bytes"
        return f"{self.output_type} {kinds} ({self.size:,} {unit})"


@dataclass(frozen=True)
class Cell:
    """A cell, addressed as JupyterLab's status bar does: `number` counts every cell from 1."""

    number: int
    cell_type: str  # code | markdown | raw
    source: str
    id: str | None
    execution_count: int | None
    outputs: tuple[OutputSummary, ...]
    attachments: tuple[str, ...]  # names of the files attached to a markdown or raw cell
    language: CellLanguage

    @property
    def lines(self) -> list[str]:
        """The source's lines; line N of the cell is `lines[N - 1]`."""
        return self.source.splitlines()


class Notebook:
    """A parsed, validated nbformat-4 notebook and how its file is formatted.

    An older notebook (nbformat 3 and before) is upgraded on reading by nbformat, as Jupyter
    opens it; its cells have no ids until it is saved. Writing it saves it as nbformat 4.5
    (cell ids added), as JupyterLab does when it saves an old notebook: `upgraded_from`
    says it will.
    """

    def __init__(self, data: dict[str, Any], style: JsonStyle, *,
                 upgraded_from: str | None = None) -> None:
        self.data = data
        self.style = style
        self.upgraded_from = upgraded_from  # the file's format ("3.0"), when not nbformat 4

    @classmethod
    def from_bytes(cls, raw: bytes, *, name: str = "the notebook") -> Notebook:
        """Parse and validate a notebook file; InvalidNotebook says what is wrong and where."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidNotebook(f"{name} is not UTF-8 text ({exc}); a notebook is a UTF-8 "
                                  "JSON file.", name=name, reason="not_utf8") from None
        return cls.from_text(text, name=name)

    @classmethod
    def from_text(cls, text: str, *, name: str = "the notebook") -> Notebook:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidNotebook(f"{name} is not valid JSON (line {exc.lineno}, column "
                                  f"{exc.colno}: {exc.msg}); a notebook is an nbformat JSON "
                                  "file.", name=name, reason="not_json") from None
        if isinstance(data, dict) and data.get("nbformat") in _OLD_FORMATS:
            upgraded = _upgraded(text, data, name)
            validate(upgraded, name=name)
            return cls(upgraded, _NBFORMAT_STYLE,
                       upgraded_from=f"{data['nbformat']}.{data.get('nbformat_minor', 0)}")
        validate(data, name=name)
        return cls(data, JsonStyle.of(text, data))

    @classmethod
    def of_data(cls, data: dict[str, Any]) -> Notebook:
        """A notebook already in memory (a shared document's content), to read; it has no
        file formatting of its own, so writing it uses nbformat's."""
        return cls(data, _NBFORMAT_STYLE)

    @property
    def format(self) -> str:
        """The nbformat version of the file as read ("4.5"; "3.0" for an upgraded one)."""
        return self.upgraded_from or f"{self.data['nbformat']}.{self.data.get('nbformat_minor')}"

    @property
    def saved_format(self) -> str:
        """The nbformat version a change of this notebook is saved in."""
        return f"4.{_UPGRADED_MINOR}" if self.upgraded_from else self.format

    def as_nbformat(self) -> nbformat.NotebookNode:
        """The notebook as nbformat reads it (sources joined into strings)."""
        import nbformat  # imported when needed: its validator costs seconds to import
        from nbformat.v4.rwbase import rejoin_lines

        return rejoin_lines(nbformat.from_dict(copy.deepcopy(self.data)))

    @cached_property
    def language(self) -> str:
        """The kernel's language (kernelspec, else language_info; python when neither says)."""
        return notebook_language(self.data.get("metadata", {}))

    @cached_property
    def cells(self) -> list[Cell]:
        return [self._cell(number, raw) for number, raw in enumerate(self.data["cells"], 1)]

    def cell(self, number: int) -> Cell:
        """The cell numbered `number` (1-based); CellOutOfRange when there is none."""
        count = len(self.data["cells"])
        if not 1 <= number <= count:
            raise CellOutOfRange(cell=number, cell_count=count)
        return self.cells[number - 1]

    def find_cell(self, ref: CellRef) -> Cell:
        """The cell `ref` names, by number or by id (see `cell_number`)."""
        return self.cells[cell_number(ref, [raw.get("id") for raw in self.data["cells"]]) - 1]

    def with_sources(self, sources: Mapping[int, str]) -> bytes:
        """The file's bytes with the given cells' sources replaced, nothing else changed.

        A source kept as a list of lines in the file stays a list (split as nbformat
        does), one kept as a string stays a string.
        """
        for number in sources:
            self.cell(number)
        data = dict(self.data)
        cells = list(data["cells"])
        for number, source in sources.items():
            cell = dict(cells[number - 1])
            cell["source"] = (source.splitlines(keepends=True)
                              if isinstance(cell.get("source"), list) else source)
            cells[number - 1] = cell
        data["cells"] = cells
        if self.upgraded_from:
            return _as_upgraded_file(data)
        return self.style.dumps(data).encode("utf-8")

    def _cell(self, number: int, raw: Mapping[str, Any]) -> Cell:
        source = _joined(raw.get("source", ""))
        cell_type = raw.get("cell_type", "code")
        return Cell(
            number=number,
            cell_type=cell_type,
            source=source,
            id=raw.get("id"),
            execution_count=raw.get("execution_count"),
            outputs=tuple(_summary(output) for output in raw.get("outputs", ())),
            attachments=tuple(raw.get("attachments", {})),
            language=cell_language(cell_type, source, self.language),
        )


# What nbformat's upgrade takes to nbformat 4, and the minor version an upgraded file gets.
_OLD_FORMATS = (1, 2, 3)
_UPGRADED_MINOR = 5
# How nbformat writes (and a shared document's content, which has no file style of its own).
_NBFORMAT_STYLE = JsonStyle(1, _SEPARATORS[0], False, "\n", True, exact=False)


def _upgraded(text: str, data: dict[str, Any], name: str) -> dict[str, Any]:
    """An old notebook as nbformat 4 (4.4: its cells have no ids yet), upgraded by nbformat
    as Jupyter opens it; InvalidNotebook (old_format) when nbformat cannot upgrade it."""
    import nbformat  # imported when needed: its validator costs seconds to import

    with warnings.catch_warnings():  # nbformat warns of what the upgrade repairs
        warnings.simplefilter("ignore")
        try:
            upgraded = json.loads(json.dumps(nbformat.reads(text, as_version=4)))
        except (nbformat.ValidationError, ValueError, KeyError, TypeError,
                AttributeError) as exc:
            raise InvalidNotebook(
                f"{name} is nbformat {data.get('nbformat')}, and nbformat cannot upgrade it to "
                f"nbformat 4 ({exc}).", name=name, reason="old_format",
                nbformat=data.get("nbformat")) from None
    # The upgrade draws random cell ids: they would change at every read. The cells get
    # their ids when the notebook is saved as nbformat 4.5.
    for cell in upgraded.get("cells", ()):
        cell.pop("id", None)
    upgraded["nbformat_minor"] = 4
    for key in ("orig_nbformat", "orig_nbformat_minor"):
        upgraded.get("metadata", {}).pop(key, None)
    return upgraded


def _as_upgraded_file(data: dict[str, Any]) -> bytes:
    """An upgraded notebook's file: nbformat 4.5, cell ids added, written as nbformat (and
    so JupyterLab) writes notebooks."""
    import nbformat
    from nbformat.v4.nbbase import random_cell_id

    data = {**data, "nbformat_minor": _UPGRADED_MINOR,
            "cells": [{**cell, "id": cell.get("id") or random_cell_id()}
                      for cell in data["cells"]]}
    text = nbformat.writes(nbformat.from_dict(data), version=4)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def cell_number(ref: CellRef, ids: Sequence[str | None], *, shared: bool = False) -> int:
    """The number (from 1) of the cell `ref` names among cells with these `ids`, in order.

    A number must be in range (CellOutOfRange). A string is a cell id (UnknownCellId when
    no cell has it); a string of digits that no cell has as its id is read as a number, as
    clients that send every argument as a string mean it.
    """
    if isinstance(ref, str):
        for number, cell_id in enumerate(ids, 1):
            if cell_id == ref:
                return number
        if not ref.isdecimal():
            raise UnknownCellId(cell_id=ref, cell_count=len(ids),
                                has_ids=any(cell_id is not None for cell_id in ids),
                                shared=shared)
        ref = int(ref)
    if not 1 <= ref <= len(ids):
        raise CellOutOfRange(cell=ref, cell_count=len(ids), shared=shared)
    return ref


# The newest nbformat 4 minor version and the cell types JupyterLab (and nbformat) load.
LOADABLE_MINOR = 5
LOADABLE_CELL_TYPES = ("code", "markdown", "raw")


def unloadable(nbformat_version: object, minor: object, cell_types: Sequence[object], *,
               name: str = "the notebook") -> InvalidNotebook | None:
    """Why JupyterLab cannot load a notebook of this nbformat 4 version and these cell types
    (a newer minor version, a cell type it does not know): one answer for every tool, which
    reads and changes nothing of it. None when it can."""
    unknown = sorted({str(kind) for kind in cell_types if kind not in LOADABLE_CELL_TYPES})
    newer = nbformat_version == 4 and isinstance(minor, int) and minor > LOADABLE_MINOR
    if not newer and not unknown:
        return None
    what = []
    if newer:
        what.append(f"is nbformat 4.{minor} (newer than the 4.{LOADABLE_MINOR} JupyterLab reads)")
    if unknown:
        what.append(f"has cells of a type JupyterLab does not know ({', '.join(unknown)}; it "
                    "knows code, markdown and raw)")
    return InvalidNotebook(
        f"{name} {' and '.join(what)}: JupyterLab cannot load it, so the tools neither "
        "read nor change it (nothing was read or written). Save it as nbformat "
        f"4.{LOADABLE_MINOR} with code, markdown and raw cells only (in the program that wrote "
        "it), or write the whole notebook anew.", name=name, reason="unloadable")


def validate(data: Any, *, name: str = "the notebook") -> None:
    """Refuse what is not a valid nbformat-4 notebook, saying the schema's complaint."""
    if not isinstance(data, dict) or ("cells" not in data and "worksheets" not in data):
        raise InvalidNotebook(f"{name} is JSON but not a notebook (no \"cells\"); a notebook "
                              "has nbformat, nbformat_minor, metadata and cells.", name=name,
                              reason="not_a_notebook")
    if data.get("nbformat") != 4:
        raise InvalidNotebook(
            f"{name} is nbformat {data.get('nbformat')!r}; the tools work on nbformat 4.",
            name=name, reason="old_format", nbformat=data.get("nbformat"))
    # Imported here: nbformat's validator takes seconds to load, and the search workers
    # read notebooks (unvalidated) through this module.
    import nbformat

    # The validator may repair the notebook it is given (cell ids): it gets a copy.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nbformat.validate(copy.deepcopy(data))
        except nbformat.ValidationError as exc:
            where = "/".join(str(part) for part in exc.absolute_path) or "the top level"
            raise InvalidNotebook(f"{name} is not a valid nbformat 4 notebook: at {where}: "
                                  f"{exc.message}", name=name, reason="schema") from None
    # Valid for nbformat, which takes a newer minor version's cells as they come: JupyterLab
    # cannot load it all the same.
    cells = data.get("cells")
    problem = unloadable(4, data.get("nbformat_minor"),
                         [cell.get("cell_type") for cell in cells if isinstance(cell, dict)]
                         if isinstance(cells, list) else [], name=name)
    if problem is not None:
        raise problem


def _joined(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def _summary(output: Mapping[str, Any]) -> OutputSummary:
    output_type = output.get("output_type", "?")
    if output_type == "stream":
        text = _joined(output.get("text", ""))
        return OutputSummary(output_type, (output.get("name", "stdout"),), len(text), text)
    if output_type == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return OutputSummary(output_type, (output.get("ename", "Error"),), len(text), text)
    data: Mapping[str, Any] = output.get("data", {})
    sizes = {kind: len(_joined(value)) if isinstance(value, (str, list))
             else len(json.dumps(value)) for kind, value in data.items()}
    plain = data.get("text/plain")
    return OutputSummary(output_type, tuple(data), max(sizes.values(), default=0),
                         _joined(plain) if isinstance(plain, (str, list)) else None)
