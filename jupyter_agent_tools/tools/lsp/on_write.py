"""Diagnostics on write: after a tool changed files, sync + save them through their servers
(created and deleted ones are announced as a file watcher would) and attach only the
diagnostics that are new for this run.

The `lsp` resource contributes these wrappers by name (`LanguageServerSupervisor.
call_wrappers`), as the runtime names its tools: what they add to a result is tool wording."""

from __future__ import annotations

import asyncio
from typing import Any

from ...files import FilesError
from ...lsp.journal import FileDiagnostic
from ...lsp.session import FileDiagnostics, LspSession
from ...runtime import CallContext, Resource, Tier, ToolResult
from ...runtime.wrappers import CallNext
from .errors import problems_of


async def diagnostics_on_write(ctx: CallContext, args: Any, call_next: CallNext) -> ToolResult:
    """The wrapper the `lsp` resource contributes: reads `ctx.written` after the call."""
    session: LspSession | None = ctx.run.resources.get(Resource.LSP)
    _start_early(ctx, args, session)
    result = await call_next()
    if session is None or not result.ok or not ctx.written:  # most calls: no thread hop
        return result
    changed = list(dict.fromkeys(ctx.written))
    on_disk = await asyncio.to_thread(lambda: {p: (p.is_file(), p.exists()) for p in changed})
    written = [p for p in changed if on_disk[p][0]]
    created = [p for p in written if p in ctx.created]
    deleted = [p for p in changed if not on_disk[p][1]]
    if created or deleted:  # first, so that the diagnostics below already account for them
        session.files_created_or_deleted(created, deleted)
    if not written:
        return result
    reports = await session.diagnostics_many(written, save=True,
                                             light=session.limits.light_write_diagnostics)
    lines, files, new_items = [], {}, []
    limit = session.limits.max_diagnostics
    for report in reports:
        rel = ctx.run.relpath(report.path)
        new = session.journal.observe(rel, report.items) if report.available else []
        new_items.extend(new)
        files[rel] = _file_summary(report, len(new))
        lines.append(_describe(rel, report, new, limit))
    result.data["diagnostics"] = {"new": [d.to_json() for d in new_items[:limit]], "files": files}
    ctx.notes.append("\n".join(lines))
    return result


def _start_early(ctx: CallContext, args: Any, session: LspSession | None) -> None:
    """For a write-tier call naming one file (`write`, `edit`), start the light server that
    will give its diagnostics now, beside the write, so that the first write of a run does
    not wait for the server to start (nothing starts for other calls). Not cancelled with
    the call: a start cut half-way would leave the server neither up nor down; the
    diagnostics after the write wait for it."""
    path = getattr(args, "path", None)
    if (session is None or ctx.tool.tier is not Tier.WRITE or not isinstance(path, str)
            or not session.limits.light_write_diagnostics or path.endswith(".ipynb")):
        return
    try:
        resolved = ctx.run.resolve(path)
    except (FilesError, OSError, ValueError):  # the call itself says what is wrong with it
        return
    task = asyncio.ensure_future(session.start_light_servers(resolved))
    _STARTING.add(task)
    task.add_done_callback(_STARTING.discard)


#: Early starts under way (held, so that they are not collected before they end).
_STARTING: set[asyncio.Future[None]] = set()


async def files_of_commands(ctx: CallContext, _args: Any, call_next: CallNext) -> ToolResult:
    """The other wrapper of the `lsp` resource: an exec-tier call (bash, a cell) may create or
    delete files; the servers' source files are listed before and after, and what changed is
    announced, as a file watcher would."""
    session: LspSession | None = ctx.run.resources.get(Resource.LSP)
    before = await session.source_files() if session is not None and ctx.tool.tier is Tier.EXEC else None
    result = await call_next()
    if session is not None and before is not None:
        after = await session.source_files()
        if after is not None and after != before:
            session.files_created_or_deleted(sorted(after - before), sorted(before - after))
    return result


def _file_summary(report: FileDiagnostics, new: int) -> dict[str, Any]:
    if not report.available:
        return {"status": "unavailable", "reason": "; ".join(problems_of(report))}
    status = "pending" if report.pending else "ok"
    summary: dict[str, Any] = {"status": status, "total": len(report.items), "new": new}
    if report.pending:
        summary["pending"] = report.pending
    if problems := problems_of(report):
        summary["problems"] = problems
    return summary


def _describe(rel: str, report: FileDiagnostics, new: list[FileDiagnostic], limit: int) -> str:
    if not report.available:
        return f"No diagnostics for {rel}: {'; '.join(problems_of(report))}."
    parts = []
    if new:
        parts.append(f"New diagnostics in {rel} ({len(new)} new, {len(report.items)} total):")
        parts.extend(f"  {d.describe()}" for d in new[:limit])
        if len(new) > limit:
            parts.append(f"  [... {len(new) - limit} more; call lsp diagnostics on {rel}]")
    else:
        known = len(report.items)
        parts.append(f"No new diagnostics in {rel}" + (f" ({known} known remain)." if known else "."))
    if report.pending:
        parts.append(f"  pending: {', '.join(report.pending)} did not report in time; call lsp "
                     f"diagnostics on {rel} later.")
    parts.extend(f"  {problem}" for problem in problems_of(report))
    return "\n".join(parts)
