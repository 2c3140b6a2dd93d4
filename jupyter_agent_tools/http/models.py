"""The bodies of the HTTP API: requests parsed strictly, responses as the document states them.

Request models refuse what they do not know (unknown fields, a string where a boolean is
expected); response models allow extra keys so a new field in a runtime payload reaches
clients before the model names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..runtime import Approvals, Permission, Resource, Surface

#: Longer than any path the OS accepts (PATH_MAX is 4096 on Linux).
MAX_PATH_CHARS = 4096
#: Names chosen by clients: conversation ids, spaces, tool names, card ids.
MAX_NAME_CHARS = 1024
#: Free text a human types on a card.
MAX_TEXT_CHARS = 100_000


class RequestModel(BaseModel):
    """A request body: strict types, unknown fields refused by name."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ResponseModel(BaseModel):
    """A response body: extra keys pass through (documented as allowed)."""

    model_config = ConfigDict(extra="allow")


# -- requests ------------------------------------------------------------------------------


#: Paths are text without NUL bytes (the OS cannot name a file with one).
NO_NUL = r"^[^\x00]*$"


class RunRequest(RequestModel):
    """The options of a new run (`POST runs`; the MCP endpoint reads them from its query)."""

    # The document says what create_run enforces: one of kernel_id and notebook, not both.
    model_config = ConfigDict(**RequestModel.model_config, json_schema_extra={"not": {
        "required": ["kernel_id", "notebook"],
        "properties": {"kernel_id": {"type": "string"}, "notebook": {"type": "string"}},
    }})

    cwd: str | None = Field(None, max_length=MAX_PATH_CHARS, pattern=NO_NUL,
                            description="Working directory under the server root (default '.').")
    surface: Surface | None = Field(None, description="full | plan | readonly (server default).")
    conversation_id: str | None = Field(None, max_length=MAX_NAME_CHARS,
                                        description="Keys the run's debug session.")
    vibe: bool = Field(False, description="Attach the worker pool (vibe_* tools).")
    approvals: Approvals | None = Field(None, description="auto | ask | deny (server default).")
    space: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="Where the run's cards show, e.g. 'lab' or a notebook path.")
    resources: list[Resource] | None = Field(
        None, max_length=len(Resource),
        description="Attach only these resources (the working directory always).")
    kernel_id: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS,
                                  description="Evaluate Python in this existing kernel (the user's).")
    notebook: str | None = Field(None, min_length=1, max_length=MAX_PATH_CHARS, pattern=NO_NUL,
                                 description="Evaluate Python in the kernel of this notebook's session.")
    sandbox: Literal["off", "workspace-write", "read-only"] | None = Field(
        None, description="Confine bash, the run's own eval kernels, debug launches and worker "
                          "commands (Linux Landlock): workspace-write writes only in cwd and a "
                          "private temp folder, read-only only in the latter; neither reads "
                          "Jupyter's runtime directory (server default per surface: "
                          "c.Runtime.sandbox). Refused (409 unavailable) where it cannot be.")
    network: bool | None = Field(
        None, description="false cuts the network off for bash, the run's own eval kernels, "
                          "debug launches and worker commands (server default: "
                          "c.Runtime.sandbox_network). Refused (409 unavailable) where it "
                          "cannot be.")
    origin: Literal["http", "notebook"] = Field(
        "http", description="Who creates the run, as front ends show it.")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> RunRequest:
        """The options from URL query parameters (strings): `vibe=true`, `resources=lsp,parser`.

        Raises pydantic's ValidationError like `model_validate_json` does.
        """
        data: dict[str, Any] = dict(query)
        if isinstance(data.get("resources"), str):
            data["resources"] = [name for name in data["resources"].split(",") if name]
        return cls.model_validate(data, strict=False)

    def create_run_options(self) -> dict[str, Any]:
        """Keyword arguments for `Runtime.create_run` (without `origin`: the caller says it)."""
        return {
            "cwd": self.cwd or ".",
            "surface": None if self.surface is None else self.surface.value,
            "conversation_id": self.conversation_id,
            "vibe": self.vibe,
            "approvals": None if self.approvals is None else self.approvals.value,
            "space": self.space,
            "resources": None if self.resources is None else [r.value for r in self.resources],
            "kernel_id": self.kernel_id,
            "notebook": self.notebook,
            "sandbox": self.sandbox,
            "network": self.network,
        }


class CallRequest(RequestModel):
    """One tool call: the tool's name and its arguments (validated by the tool's own model)."""

    tool: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    args: dict[str, Any] = Field(default_factory=dict)


class AnswerRequest(RequestModel):
    """A human's answer to a card: an option label or labels, free text, or a skip."""

    answer: str | list[str] | None = Field(None, description="A label, or labels (multi-select).")
    text: str | None = Field(None, max_length=MAX_TEXT_CHARS, description="Free text.")
    skip: bool = Field(False, description="Skip the card: the agent proceeds on its assumption.")


class ResolveRequest(RequestModel):
    """How a human resolves a staged edit of an ended run."""

    action: Literal["accept", "discard"] = Field(
        description="accept writes every file (all or nothing, refused if any changed since "
                    "staging); discard drops the edit.")


class ToolsQuery(RequestModel):
    """Query of `GET runs/{id}/tools`."""

    format: Literal["json", "openai", "anthropic"] = "json"


# -- responses -----------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(description="A contract error code (CONTRACT.md), e.g. invalid_arguments.")
    message: str = Field(description="What went wrong and what to do next.")


class ErrorResponse(BaseModel):
    """Every 4xx (and the 5xx of a server bug): `{error: {code, message}}`, no traceback."""

    error: ErrorDetail


class Block(ResponseModel):
    """One piece of a result for a human: text, image, html or diff."""

    type: str


class CallResult(ResponseModel):
    """What a call answers (`ToolResult.to_json`); tool failures are `ok: false`."""

    ok: bool
    text: str
    data: dict[str, Any]
    error: ErrorDetail | None
    blocks: list[Block]


class RunSandboxDescriptor(ResponseModel):
    """A run's sandbox, as its descriptor shows it."""

    modes: dict[str, Literal["off", "workspace-write", "read-only"]]
    network: bool


class RunClient(ResponseModel):
    """The program an agent runs in, as it named itself (MCP `initialize`'s clientInfo)."""

    name: str
    version: str | None


class RunDescriptor(ResponseModel):
    """A run as `GET runs/{id}` describes it."""

    id: str
    cwd: str
    surface: Surface
    approvals: Approvals
    conversation_id: str | None
    space: str | None
    vibe: bool
    parent_id: str | None
    origin: str = Field(description="api, http, notebook, worker, mcp or cli.")
    resources: list[str]
    sandbox: RunSandboxDescriptor | None = Field(
        None, description="What the run confines: the mode per surface (bash, eval, debug, "
                          "workers) and whether it may use the network.")
    tools: list[str]
    created_at: float
    transcript_dropped: int = Field(
        0, description="How many of the run's oldest calls its transcript dropped (past "
                       "c.Runtime.max_transcript_entries or max_transcript_bytes).")
    state: Literal["open", "ended"] = Field(
        "open", description="ended: closed, or ended by a restart of the server; an ended run "
                            "is kept in the run store (its transcript, staged edits, cards).")
    ended_by: Literal["close", "idle", "restart"] | None = Field(
        None, description="How an ended run ended: closed by its client, closed after it sat "
                          "idle, or by a restart (or crash) of the server.")
    ended_at: float | None = None
    resumed_from: str | None = Field(
        None, description="The ended run of the same conversation_id whose transcript this run "
                          "continues (its calls are at the start of this run's transcript).")
    notice: str | None = Field(
        None, description="What a resumed run was told of what did not survive (kernels, "
                          "debug sessions); also said with its first result.")
    client: RunClient | None = Field(
        None, description="The agent's program (an MCP client's name and version from "
                          "initialize); null when it did not say.")
    staged_edits: int = Field(
        0, description="How many of its edits wait for a human's accept or discard (an ended "
                       "run's too: POST runs/{id}/edits/{edit_id}).")


class TranscriptEntry(ResponseModel):
    """One call of a run; `ok`, `duration_ms` and `text` stay null while it runs."""

    call_id: str
    tool: str
    label: str
    args: dict[str, Any]
    origin: str
    started_at: float
    ok: bool | None
    error_code: str | None
    duration_ms: float | None
    text: str | None
    args_omitted_bytes: int | None = Field(
        None, description="Set (and `args` empty) when the call's arguments alone were larger "
                          "than c.Runtime.max_transcript_bytes: about the bytes they held in memory. "
                          "Such a call cannot be replayed.")
    data: dict[str, Any] | None = Field(
        None, description="The result's data, kept for tools whose data front ends act on "
                          "(notebook: path, cells, change_id) when it is small; else null.")


class CardOption(ResponseModel):
    """One choice on a card; a human answers with its label."""

    label: str
    description: str | None = None
    value: Permission | None = Field(
        None, description="What a permission card's option means to the approval gate "
                          "(front ends mark Deny); absent on questions.")


class QuestionCard(ResponseModel):
    """An `ask_user` question or a permission request, as front ends show it."""

    id: str
    number: int
    run_id: str
    space: str
    kind: Literal["question", "permission"]
    question: str
    context: str
    options: list[CardOption]
    allow_free_text: bool
    multi_select: bool
    tool: str | None
    tier: str | None
    label: str | None
    args: dict[str, Any] | None
    status: Literal["pending", "answered", "skipped", "timed_out", "cancelled", "ended"] = Field(
        description="ended: the card's run ended (closed, or a restart) before it was answered.")
    answer: str | list[str] | None
    text: str | None
    created_at: float


class StagedEdit(ResponseModel):
    """An `ast_edit` rewrite, or an edit a language server proposed (an `lsp code_actions`
    action applied; `lsp_rename` under review): staged until `resolve` accepts or discards it."""

    edit_id: str
    status: Literal["staged", "accepted", "discarded", "stale"]
    pattern: str = Field(description="ast_edit's pattern; for a language server's edit, what "
                         "proposed it, e.g. \"code action (ruff)\".")
    rewrite: str = Field(description="ast_edit's rewrite; for a language server's edit, the "
                         "action's title.")
    origin: Literal["ast_edit", "lsp"] = "ast_edit"
    language: str
    replacements: int
    files: dict[str, int] = Field(description="Replacements per file.")
    created_at: float
    diff: str = Field(description="A unified diff of every file.")


class WorkerDescriptor(ResponseModel):
    """A background worker of a run (vibe mode): its state and the tail of its last output."""

    worker_id: str
    label: str
    tier: str
    status: Literal["queued", "running", "done", "failed", "killed"]
    elapsed_seconds: float
    result: str | None
    restarts: int
    child_run_id: str = Field(description="The worker's own run (its tools' calls are there).")


class ServerStatus(ResponseModel):
    """What each resource can serve, and why not where it cannot."""

    root_dir: str
    tools: list[str]
    tool_load_errors: dict[str, str]
    resources: dict[str, Any]
    resource_errors: dict[str, str]
    runs: int


# -- agent tokens --------------------------------------------------------------------------


class TokenRequest(RequestModel):
    """A new agent token (`POST tokens`): its label, its ceiling and when it expires."""

    label: str = Field("agent", min_length=1, max_length=200,
                       description="What the token is for, as `token list` shows it.")
    surface: Surface = Field(description="The widest surface its runs may have "
                                         "(readonly < plan < full).")
    approvals: Approvals = Field(description="The least strict approvals policy its runs may "
                                             "have (auto < ask < deny).")
    cwd: str = Field(".", min_length=1, max_length=MAX_PATH_CHARS, pattern=NO_NUL,
                     description="The folder (relative to the server root) its runs' working "
                                 "directories must be inside.")
    space: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS,
                              description="The only space its runs may show cards in (any "
                                          "when unset).")
    expires_seconds: int | None = Field(None, ge=1, le=366 * 86_400,
                                        description="Seconds until it expires (30 days when "
                                                    "unset).")

    @field_validator("expires_seconds", mode="before")
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        """JSON's integer is any number without a fraction: `3600.0` too (as JSON Schema says)."""
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class AgentTokenDescriptor(ResponseModel):
    """A stored agent token: its ceiling and expiry (never the token itself)."""

    id: str
    label: str
    surface: Surface
    approvals: Approvals
    cwd: str
    space: str | None
    created_at: float
    expires_at: float
    expired: bool


class TokenCreated(AgentTokenDescriptor):
    """A new agent token: the token itself is in this answer only (it is stored hashed)."""

    token: str = Field(description="`jat_…`: send it as `Authorization: token <token>` (or "
                                   "`?token=` on agent-tools/mcp). Shown once.")
