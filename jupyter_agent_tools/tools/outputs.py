"""What each tool's structured result (`data`, MCP's `structuredContent`) carries.

Every key is optional: a failed call carries `error` and whatever was produced before it
failed, and a tool with actions answers each action's own keys (declared here where they are
shared; others are allowed beside them). A key declared here always has the type declared:
MCP clients check each result against it (tests/mcp_endpoint/test_output_schemas.py calls
every tool).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..questions.cards import CardStatus
from ..runtime.outputs import LongCallOutput, ToolOutput
from ..workers.worker import WorkerStatus

Items = list[dict[str, Any]]


class ChangeOutput(ToolOutput):
    """A call that changes files: the language servers' report on them comes with it."""

    diagnostics: dict[str, Any] | None = Field(
        None, description="{new, files}: the problems the change brought, per file.")


class ReadOutput(ToolOutput):
    path: str | None = Field(None, description="The file read, relative to the run's cwd.")
    start_line: int | None = Field(None, description="The first line shown (1-based).")
    end_line: int | None = Field(None, description="The last line shown.")
    total_lines: int | None = Field(None, description="The file's length in lines.")
    encoding: str | None = Field(None, description="The text's encoding (utf-8, ...).")
    line_endings: Literal["lf", "crlf", "mixed"] | None = Field(
        None, description="The file's line breaks (absent: it has none).")
    notebook: bool | None = Field(None, description="True for a notebook, read by cells.")
    shared_document: bool | None = Field(
        None, description="True when read from the notebook open in JupyterLab.")
    language: str | None = Field(None, description="The notebook's kernel language.")
    nbformat: Any = Field(None, description="The notebook's format version.")
    total_cells: int | None = Field(None, description="The notebook's length in cells.")
    start_cell: int | None = Field(None, description="The first cell shown (1-based).")
    end_cell: int | None = Field(None, description="The last cell shown.")
    cells: Items | None = Field(None, description="The cells shown: number, id, type, ...")


class WriteOutput(ChangeOutput):
    path: str | None = Field(None, description="The file written.")
    created: bool | None = Field(None, description="True when the file did not exist.")
    bytes: int | None = Field(None, description="The size written.")
    shared_document: bool | None = Field(
        None, description="True when written to the notebook open in JupyterLab.")


class EditOutput(ChangeOutput):
    path: str | None = Field(None, description="The file edited.")
    replacements: int | None = Field(None, description="How many occurrences were replaced.")
    cell: int | None = Field(None, description="The notebook cell edited (or searched).")
    line: int | None = Field(None, description="Where in the cell the first one starts.")
    column: int | None = None
    shared_document: bool | None = Field(
        None, description="True when edited in the notebook open in JupyterLab.")
    formatting_kept: bool | None = Field(
        None, description="False when the notebook's JSON layout was not kept.")
    occurrences: int | None = Field(
        None, description="How often old_string occurs, when it is not unique.")
    lines: list[int] | None = Field(None, description="The lines where it occurs.")
    cells: list[int] | None = Field(None, description="Other cells where old_string occurs.")


class ApplyPatchOutput(ChangeOutput):
    files: list[str] | None = Field(None, description="The files changed.")


class GlobOutput(ToolOutput):
    files: list[str] | None = Field(None, description="The matching files.")
    total: int | None = Field(None, description="How many match, the ones not listed too.")
    skipped: dict[str, int] | None = Field(None, description="What was left out, counted.")


class GrepOutput(ToolOutput):
    matches: Items | None = Field(
        None, description="content mode: {file, line, text, cell?, lines?} per match.")
    context: Items | None = Field(
        None, description="content mode with before/after: {file, line, text, cell?} per "
        "context line.")
    files: list[str] | None = Field(None, description="files mode: the files with a match.")
    counts: Items | None = Field(None, description="count mode: {file, count} per file.")
    total_matches: int | None = Field(
        None, description="count mode: the matching lines of every file, summed.")
    total: int | None = Field(None, description=(
        "How many matched (lines; files in files and count modes), the ones not listed too."))
    complete: bool | None = Field(None, description="False when the search hit its bound.")
    skipped: dict[str, int] | None = Field(None, description="What was left out, counted.")


class BashOutput(LongCallOutput):
    exit_code: int | None = Field(None, description="The command's exit status.")


class JobOutput(LongCallOutput):
    """A job's state and output; a finished job's result also carries the data of its call."""

    jobs: Items | None = Field(None, description="list: the run's background jobs.")
    tool: str | None = Field(None, description="The tool the job runs.")
    label: str | None = Field(None, description="What it runs (the command).")
    started_at: float | None = Field(None, description="When it started (Unix time).")
    finished_at: float | None = Field(None, description="When it ended; null while it runs.")
    output_bytes: int | None = Field(None, description="How much output it produced.")
    exit_code: int | None = Field(None, description="A finished command's exit status.")


class AstGrepOutput(ToolOutput):
    matches: Items | None = Field(None, description="{file, line, text, ...} per match.")
    total: int | None = Field(None, description="How many matched, the ones not listed too.")
    more: int | None = Field(None, description="How many are not listed.")
    files_searched: int | None = None
    language: str | None = Field(None, description="The language the pattern parsed in.")
    context: str | None = Field(None, description="The code the pattern was parsed within.")
    pattern_kind: str | None = Field(None, description="The node kind the pattern parsed as.")
    engine: str | None = Field(None, description="The matcher that searched.")
    pattern_error_node: str | None = Field(
        None, description="Where the pattern failed to parse, if it did.")
    skipped: dict[str, int] | None = Field(None, description="What was left out, counted.")
    parse_errors: list[str] | None = Field(None, description="Files that did not parse.")


class StagedEditOutput(ChangeOutput):
    """A staged edit (ast_edit, lsp code actions, a reviewed rename) and its resolution."""

    edit_id: str | None = Field(None, description="What resolve takes; null: nothing staged.")
    replacements: int | None = Field(None, description="How many replacements it makes.")
    files: dict[str, int] | None = Field(None, description="Replacements per file.")
    diff: str | None = Field(None, description="The whole change, as a unified diff.")
    pattern_kind: str | None = Field(None, description="The node kind the pattern parsed as.")
    skipped: dict[str, int] | None = Field(None, description="What was left out, counted.")
    upgraded_notebooks: dict[str, str] | None = Field(
        None, description="Old notebooks (nbformat 3) the change saves as nbformat 4.")


class ResolveOutput(StagedEditOutput):
    action: Literal["accept", "discard"] | None = Field(None, description="What was done.")
    status: str | None = Field(None, description="The edit's state now.")


class LspOutput(ToolOutput):
    """Each action answers its own keys; these are shared."""

    path: str | None = Field(None, description="The file asked about.")
    total: int | None = Field(None, description="How many were found, the ones not listed too.")
    diagnostics: Items | None = Field(None, description="diagnostics: the problems found.")
    servers: Any = Field(None, description="The language servers that answered (status).")
    edit_id: str | None = Field(None, description="A code action staged: what resolve takes.")
    diff: str | None = None
    hover: str | None = Field(None, description="hover: the signature and documentation shown.")
    full: bool | None = Field(None, description="hover: False when documentation was left out "
                              "(full: true shows it).")


class LspRenameOutput(ChangeOutput):
    files: Any = Field(None, description="[{path, edits}], or replacements per file if staged.")
    edits: int | None = Field(None, description="How many edits the rename made.")
    diff: str | None = Field(None, description="The whole change, as a unified diff.")
    edit_id: str | None = Field(None, description="A staged rename: what resolve takes.")


class DebugOutput(LongCallOutput):
    """Each action answers its own keys; these are shared."""

    adapters: Any = Field(None, description="adapters: the debug adapters and what each needs.")
    adapter: Any = Field(None, description="The session's adapter.")
    state: str | None = Field(None, description="The session's state.")
    file: str | None = None
    line: int | None = None
    stopped: dict[str, Any] | None = Field(None, description="Where the program stopped.")


class WorkerOutput(ToolOutput):
    worker_id: str | None = Field(None, description="What vibe_wait, _send and _kill take.")
    label: str | None = None
    tier: str | None = Field(None, description="fast or good.")
    status: WorkerStatus | None = None
    elapsed_seconds: float | None = None
    result: str | None = Field(None, description="Its final message (its tail).")
    restarts: int | None = Field(None, description="How often vibe_send restarted it.")
    child_run_id: str | None = Field(None, description="The run the worker's calls go to.")


class VibeWaitOutput(WorkerOutput):
    finished: bool | None = Field(None, description="False when the wait ended first.")


class VibeKillOutput(WorkerOutput):
    killed: bool | None = Field(None, description="False when it had already finished.")


class VibeListOutput(ToolOutput):
    workers: Items | None = Field(None, description="Each worker, as vibe_wait describes it.")


class EvalOutput(LongCallOutput):
    status: str | None = Field(None, description="How the cell ended: ok, error, ...; running "
                               "while it goes on as a job.")
    execution_count: int | None = None
    result: str | None = Field(None, description="The cell's value, as text.")
    images: int | None = Field(None, description="How many images the cell showed.")
    stopped: dict[str, Any] | None = Field(None, description="Where a debugger paused it.")
    language: str | None = Field(None, description="python or javascript.")
    kernel_id: str | None = None
    where: str | None = Field(None, description="Where the kernel runs.")
    user_kernel: bool | None = Field(None, description="True in the user's own kernel.")
    state_lost: bool | None = Field(
        None, description="True when what earlier cells defined is gone.")
    notebook: str | None = Field(None, description="The notebook whose kernel ran it.")
    cell: int | None = Field(None, description="The eval cell's number in the run.")


class NotebookOutput(LongCallOutput, ChangeOutput):
    """Each action answers its own keys; these are shared."""

    path: str | None = Field(None, description="The notebook.")
    cells: Items | None = Field(None, description="The cells changed or run.")
    cell_count: int | None = Field(None, description="The notebook's length in cells.")
    shared_document: bool | None = Field(
        None, description="True when changed in the notebook open in JupyterLab.")
    change_id: str | None = Field(None, description="What revert takes.")
    kernel_id: str | None = Field(None, description="The kernel that ran the cells.")
    execution_count: int | None = Field(None, description="The last cell's run count.")
    notebooks: Items | None = Field(None, description="list: the notebooks and their kernels.")
    kernels: Items | None = Field(None, description="list: the server's kernels.")
    created: bool | None = Field(None, description="create: True, the notebook is new.")
    kernel: str | None = Field(None, description="create: the kernelspec's name.")


class AskUserOutput(ToolOutput):
    card: int | None = Field(None, description="The card's number.")
    card_id: str | None = None
    status: CardStatus | None = None
    answer: Any = Field(None, description="The answer: an option's label, the labels chosen, "
                        "or the text; null when skipped.")
    selected: list[str] | None = Field(None, description="The options chosen.")
    text: str | None = Field(None, description="What the user wrote.")
    repeated: bool | None = Field(None, description="True when asked (and skipped) before.")
