"""The virtual document of a notebook: its kernel's code cells as one source file.

Parsers and language servers read one file; a notebook is many cells. The virtual
document concatenates the sources of the cells the kernel runs (two blank lines between
cells, as jupyterlab-lsp does, so style checkers see separate top-level blocks) and maps
every line back to its cell. IPython syntax (`%magic`, `%%time`, `!cmd`, `x = !cmd`,
`obj?`) is masked in place: the line keeps its number and the text before the magic its
columns, so positions map back unchanged, and a masked span is a comment or `...` that
neither breaks a parser nor matches a pattern.

Positions in the document are 0-based (line, character), as in LSP and tree-sitter;
`CellPosition` gives the cell's number (from 1) and 0-based line and character within it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .document import Cell, Notebook
from .errors import EditSpansCells, EditTouchesMagic, LineOutOfRange, NotKernelCode

CELL_SEPARATOR_LINES = 2

_LINE_MAGIC = re.compile(r"^([ \t]*)([%!])")
_ASSIGNED_MAGIC = re.compile(r"^([ \t]*[\w.,\[\] \t]+?=[ \t]*)([%!].*)$")
_HELP = re.compile(r"^([ \t]*)(\?{1,2}[\w.*]+|[\w.*]+\?{1,2})[ \t]*$")
# What every line the three mask holds (a magic or `?` at its start, `= %`/`= !`, a `?` at
# its end): a quick test, then the three at once; a cell with neither is left unscanned.
_MAYBE_IPYTHON = re.compile(r"^[ \t]*[%!?]|=[ \t]*[%!]|\?[ \t]*$", re.MULTILINE)
_ANY_IPYTHON = re.compile("|".join(f"(?:{pattern.pattern})" for pattern in (
    _LINE_MAGIC, _ASSIGNED_MAGIC, _HELP)), re.MULTILINE)


@dataclass(frozen=True)
class CellSpan:
    """Where one cell's lines are in the document."""

    cell: int  # the cell's number in the notebook (from 1)
    first_line: int  # its first line in the document (0-based)
    line_count: int


@dataclass(frozen=True)
class Mask:
    """A span of IPython syntax replaced in the document; `original` is what was there."""

    line: int  # document line (0-based)
    start: int  # first masked character
    end: int  # one past the last masked character of the original text
    original: str


@dataclass(frozen=True)
class CellPosition:
    """A place inside a cell: `cell` from 1, `line` and `character` from 0."""

    cell: int
    line: int
    character: int

    def shown(self) -> str:
        """As the tools show a place, 1-based: `[cell 3] 4:5`."""
        return f"[cell {self.cell}] {self.line + 1}:{self.character + 1}"


@dataclass(frozen=True)
class DocumentEdit:
    """A replacement in the document, from `start` to `end` (0-based line, character)."""

    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


@dataclass(frozen=True)
class VirtualDocument:
    """The notebook's kernel code as one text, with its line map and masked spans."""

    language: str
    text: str
    spans: tuple[CellSpan, ...]
    masks: tuple[Mask, ...]
    sources: Mapping[int, str]  # the original source of every cell in the document

    @classmethod
    def of(cls, notebook: Notebook) -> VirtualDocument:
        """The virtual document of the cells `notebook`'s kernel runs."""
        return cls.of_cells(notebook.language, notebook.cells)

    @classmethod
    def of_cells(cls, language: str, cells: Iterable[Cell]) -> VirtualDocument:
        lines: list[str] = []
        spans: list[CellSpan] = []
        masks: list[Mask] = []
        sources: dict[int, str] = {}
        for cell in cells:
            if not (cell.language.runs_in_kernel and cell.language.name == language):
                continue
            if spans:
                lines.extend([""] * CELL_SEPARATOR_LINES)
            cell_lines = cell.source.splitlines()
            first = len(lines)
            if language == "python":
                cell_lines, cell_masks = _mask_ipython(cell_lines, first,
                                                       cell_magic=cell.language.magic is not None)
                masks.extend(cell_masks)
            lines.extend(cell_lines)
            spans.append(CellSpan(cell.number, first, len(cell_lines)))
            sources[cell.number] = cell.source
        return cls(language, "\n".join(lines) + ("\n" if lines else ""), tuple(spans),
                   tuple(masks), sources)

    @property
    def cells(self) -> list[int]:
        """The numbers of the cells in the document, in order."""
        return [span.cell for span in self.spans]

    def cell_position(self, line: int, character: int = 0) -> CellPosition | None:
        """Where a document position is in the notebook; None between cells."""
        index = bisect.bisect_right([span.first_line for span in self.spans], line) - 1
        if index < 0:
            return None
        span = self.spans[index]
        if line >= span.first_line + span.line_count:
            return None
        return CellPosition(span.cell, line - span.first_line, character)

    def document_position(self, cell: int, line: int, character: int = 0) -> tuple[int, int]:
        """The document position of a place in a cell (line and character from 0)."""
        span = self._span(cell)
        if not 0 <= line < max(span.line_count, 1):
            raise LineOutOfRange(cell=cell, line=line + 1, line_count=span.line_count)
        return span.first_line + line, character

    def is_masked(self, line: int, character: int) -> bool:
        """Whether a document position falls in masked IPython syntax."""
        return any(mask.line == line and mask.start <= character < max(mask.end, mask.start + 1)
                   for mask in self.masks)

    def cell_sources(self, edits: Iterable[DocumentEdit]) -> dict[int, str]:
        """The new source of every cell the edits touch, applied to the original sources.

        An edit must stay within one cell and off masked syntax (NotebookError
        otherwise): masked text is not in the document, so it cannot be rewritten there.
        """
        by_cell: dict[int, list[tuple[int, int, str]]] = {}
        for edit in edits:
            start = self.cell_position(*edit.start)
            end = self.cell_position(*edit.end)
            if start is None or end is None or start.cell != end.cell:
                raise EditSpansCells
            for mask in self.masks:
                if edit.start[0] <= mask.line <= edit.end[0] and _overlaps(edit, mask):
                    raise EditTouchesMagic(cell=start.cell, syntax=mask.original.strip())
            offsets = _line_offsets(self.sources[start.cell])
            by_cell.setdefault(start.cell, []).append(
                (offsets[start.line] + start.character, offsets[end.line] + end.character,
                 edit.new_text))
        result: dict[int, str] = {}
        for cell, replacements in by_cell.items():
            source = self.sources[cell]
            for begin, finish, new_text in sorted(replacements, reverse=True):
                source = source[:begin] + new_text + source[finish:]
            result[cell] = source
        return result

    def _span(self, cell: int) -> CellSpan:
        for span in self.spans:
            if span.cell == cell:
                return span
        raise NotKernelCode(cell=cell, language=self.language)


def _overlaps(edit: DocumentEdit, mask: Mask) -> bool:
    start = edit.start if edit.start[0] == mask.line else (mask.line, 0)
    end = edit.end if edit.end[0] == mask.line else (mask.line, 1 << 30)
    return start[1] < mask.end and end[1] > mask.start


def _line_offsets(source: str) -> list[int]:
    """The offset of every line's start in `source`, plus one past the end."""
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def _mask_ipython(lines: list[str], first_line: int, *,
                  cell_magic: bool) -> tuple[list[str], list[Mask]]:
    """The cell's lines with IPython syntax masked in place, and the masks."""
    # Most cells hold no line that could be IPython syntax: nothing to mask, and no need to
    # follow brackets and strings character by character (the costly part).
    if not cell_magic:
        text = "\n".join(lines)
        if _MAYBE_IPYTHON.search(text) is None or _ANY_IPYTHON.search(text) is None:
            return lines, []
    masked: list[str] = []
    masks: list[Mask] = []
    state = _Continuation()
    for index, line in enumerate(lines):
        new_line = line
        if not state.continues():  # a `%` inside brackets or a string is Python, not a magic
            new_line = _masked_line(line, first_cell_line=index == 0 and cell_magic)
        if new_line != line:
            start = next(i for i, (a, b) in enumerate(zip(line, new_line, strict=False)) if a != b)
            masks.append(Mask(first_line + index, start, len(line), line[start:]))
        masked.append(new_line)
        state = state.after(new_line)
    return masked, masks


@dataclass(frozen=True)
class _Continuation:
    """What a line leaves open for the next: a triple-quoted string, brackets, a backslash."""

    quote: str | None = None
    depth: int = 0
    backslash: bool = False

    def continues(self) -> bool:
        return self.quote is not None or self.depth > 0 or self.backslash

    def after(self, line: str) -> _Continuation:
        index, quote, depth = 0, self.quote, self.depth
        while index < len(line):
            char = line[index]
            if quote is not None:
                if char == "\\":
                    index += 2
                elif line.startswith(quote, index):
                    index += len(quote)
                    quote = None
                else:
                    index += 1
                continue
            if char == "#":
                break
            if line.startswith(('"""', "'''"), index):
                quote = line[index:index + 3]
                index += 3
                continue
            if char in "\"'":
                quote = char
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(depth - 1, 0)
            index += 1
        # A one-quote string ends with its line (an unclosed one is the parser's problem).
        if quote is not None and len(quote) == 1:
            quote = None
        backslash = quote is None and line.endswith("\\") and "#" not in line
        return _Continuation(quote, depth, backslash)


def _masked_line(line: str, *, first_cell_line: bool) -> str:
    if first_cell_line:  # the `%%time` line of a cell the kernel runs
        return _commented(line)
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned is not None:  # `files = !ls`, `t = %timeit -o f()`
        prefix, _magic = assigned.groups()
        return prefix + "..."  # the rest of the line is the magic: no column after it
    if _LINE_MAGIC.match(line) or _HELP.match(line):
        return _commented(line)
    return line


def _commented(line: str) -> str:
    """The line as a comment of the same length: its first non-blank character becomes #."""
    stripped = len(line) - len(line.lstrip())
    return line[:stripped] + "#" + line[stripped + 1:]
