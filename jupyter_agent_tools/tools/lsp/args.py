"""The arguments of `lsp` and `lsp_rename`: one flat object per tool for the agent, and for
`lsp` the model of each action, into which every call is validated."""

from __future__ import annotations

from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ...runtime import ToolArgs

LspAction = Literal["diagnostics", "definition", "type_definition", "implementation",
                    "references", "hover", "symbols", "code_actions", "status", "reload"]

# A name, or a search by name: bounded, since each is sent to a server and searched for.
MAX_NAME_CHARS = 1_000


class LspArgs(ToolArgs):
    action: LspAction = Field(description="What to ask the language server.")
    file: str | None = Field(None, description="File, relative to the cwd; \"*\" with "
                             "diagnostics checks the whole project.")
    cell: Annotated[int, Field(ge=1)] | str | None = Field(
        None, description="Notebooks (.ipynb) only: the cell, numbered from 1 over every cell "
        "as JupyterLab shows, or its cell id; `line` then counts within the cell. Needed "
        "wherever a line is.")
    line: int | None = Field(None, ge=1, description="1-based line of the symbol.")
    symbol: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS,
                               description="The name on that line to ask about (never a "
                               "column); needed by navigation and hover.")
    occurrence: int | None = Field(None, ge=1, description="Which occurrence of symbol on the "
                                   "line, when it appears several times (1-based).")
    query: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="symbols: search the workspace by name instead of "
                              "listing a file's symbols.")
    kind: str | None = Field(None, min_length=1, max_length=100, description="code_actions: "
                             "only actions of this kind (\"quickfix\", \"refactor\", "
                             "\"refactor.extract\", \"source.organizeImports\", ...).")
    apply: Annotated[int, Field(ge=1)] | Annotated[str, Field(min_length=1, max_length=
                                                              MAX_NAME_CHARS)] | None = Field(
        None, description="code_actions: the action to apply, by its number in the list or "
        "its exact title. It is staged, not written: the answer has a diff and an edit_id "
        "for resolve.")
    full: bool = Field(False, description="hover: the whole documentation (by default the "
                       "signature and the documentation's first paragraph).")


class LspRenameArgs(ToolArgs):
    file: str = Field(description="File holding the symbol, relative to the cwd.")
    cell: int | None = Field(None, ge=1, description="Notebooks (.ipynb) only: the cell, "
                             "numbered from 1 over every cell; `line` then counts within it.")
    line: int = Field(ge=1, description="1-based line the symbol is on.")
    symbol: str = Field(min_length=1, max_length=MAX_NAME_CHARS,
                        description="The current name, as it appears on the line.")
    new_name: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="The new name.")
    occurrence: int | None = Field(None, ge=1, description="Which occurrence of symbol on the "
                                   "line, when it appears several times (1-based).")


class SymbolAt(Protocol):
    """Arguments that point at a name on a line (of a notebook's cell)."""

    @property
    def file(self) -> str: ...
    @property
    def cell(self) -> int | None: ...
    @property
    def line(self) -> int: ...
    @property
    def symbol(self) -> str | None: ...
    @property
    def occurrence(self) -> int | None: ...


# -- per action: what each one takes, required where it needs it ---------------------------
# Descriptions are the hints of "lsp <action> needs `<field>`: ..." messages.


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the flat object carries every action's fields


class Diagnostics(_Action):
    action: Literal["diagnostics"]
    file: str = Field(description="a file, or \"*\" for the whole project.")
    cell: int | None = None


class _AtSymbol(_Action):
    file: str = Field(description="the file the symbol is in.")
    line: int = Field(description="the 1-based line the symbol is on.")
    cell: int | None = None
    symbol: str | None = None  # missing: `missing_symbol`, which names what is on the line
    occurrence: int | None = None


class Navigate(_AtSymbol):
    action: Literal["definition", "type_definition", "implementation", "references"]


class Hover(_AtSymbol):
    action: Literal["hover"]
    full: bool = False


class CodeActions(_Action):
    action: Literal["code_actions"]
    file: str = Field(description="the file to look at.")
    line: int = Field(description="the 1-based line to fix.")
    cell: int | None = None
    symbol: str | None = None
    occurrence: int | None = None
    kind: str | None = None
    apply: int | str | None = None


class Symbols(_Action):
    action: Literal["symbols"]
    file: str | None = None  # or `query`: checked by the action, which says so
    cell: int | None = None
    query: str | None = None


class Status(_Action):
    action: Literal["status"]
    file: str | None = None


class Reload(_Action):
    action: Literal["reload"]
    file: str | None = None


LspCall = Annotated[
    Diagnostics | Navigate | Hover | CodeActions | Symbols | Status | Reload,
    Field(discriminator="action"),
]
LSP_ACTIONS: TypeAdapter[LspCall] = TypeAdapter(LspCall)
