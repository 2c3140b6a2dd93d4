"""`lsp diagnostics`: a file's (or a notebook cell's) diagnostics from its servers, or each
language's own project check over the run's cwd for "*"."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

from ...files import FilesError
from ...lsp.errors import LspError, ProjectCheckError
from ...lsp.journal import FileDiagnostic
from ...lsp.project_check import run_project_check
from ...lsp.session import OUTSIDE_ROOT, LspSession
from ...lsp.specs import ServerSpec
from ...notebooks import is_notebook_path
from ...runtime import CallContext, ErrorCode, ToolError, ToolResult
from .args import Diagnostics
from .errors import problems_of
from .places import build_config_note, build_config_notes, cell_span, check_cell


async def diagnostics(session: LspSession, ctx: CallContext, args: Diagnostics) -> ToolResult:
    """A file's diagnostics (waiting for publication, bounded), or the project check for '*'."""
    if args.file == "*":
        return await project_diagnostics(session, ctx)
    path = session.run.resolve(args.file)
    rel = session.run.relpath(path)
    if not await asyncio.to_thread(path.is_file):
        raise ToolError(ErrorCode.NOT_FOUND, f"{rel} is not a file. Check the path with glob.")
    check_cell(session, path, args.cell, "diagnostics", needs_cell=False)
    cell = args.cell
    if cell is not None:
        cell_span(session, await session.document(path), cell)
    report = await session.diagnostics(path, save=False)
    if not report.available:
        raise ToolError(ErrorCode.UNAVAILABLE, f"No language server for {rel}: "
                        f"{'; '.join(problems_of(report))}. Call lsp with action=status for "
                        "details.")
    # A project whose server guesses its build (clangd without a compile database): its
    # "file not found" errors for the project's own headers are one fact, said once.
    guessing = await build_config_notes(session, path)
    unfound = [d for d in report.items if guessing and "file not found" in d.message]
    report.items = [d for d in report.items if d not in unfound]
    shown = rel
    if cell is None:
        session.journal.observe(rel, report.items)
    else:  # the whole notebook is checked, one cell shown: the others are not "seen" yet
        report.items = [d for d in report.items if d.cell == cell]
        shown = f"{rel} [cell {cell}]"
    limit = session.limits.max_diagnostics
    status = "pending" if report.pending else "clean" if not report.items else "reported"
    answered = ", ".join(report.answered)
    failed = f" {', '.join(report.failed)} failed (below)." if report.failed else ""
    if not report.answered and report.failed:
        head = f"No diagnostics received for {shown}: {', '.join(report.failed)} failed."
        status = "failed"
    elif status == "pending":
        head = (f"Diagnostics for {shown} are pending: {', '.join(report.pending)} did not report "
                f"in time. What has arrived so far is below; call again shortly.{failed}")
    elif status == "clean":
        head = f"No diagnostics in {shown} from {answered}: clean.{failed}"
    else:
        head = f"Diagnostics in {shown} ({len(report.items)}) from {answered}:{failed}"
    lines = [head, *(f"  {d.describe()}" for d in report.items[:limit])]
    if len(report.items) > limit:
        lines.append(f"  [cut: showing {limit} of {len(report.items)}]")
    problems = problems_of(report)
    lines.extend(f"  {problem}" for problem in problems)
    lines.extend(_build_config_lines(unfound, guessing))
    return ToolResult.success("\n".join(lines), {
        **({"cell": cell} if cell is not None else {}), "path": rel, "status": status,
        "diagnostics": [d.to_json() for d in report.items[:limit]],
        "total": len(report.items), "truncated": len(report.items) > limit,
        "pending": report.pending, "problems": problems, "servers": report.answered,
        "failed": report.failed, "build_config": guessing,
        "files_not_found": [d.to_json() for d in unfound],
    })


def _build_config_lines(unfound: list[FileDiagnostic], guessing: list[str], cause: str = ""
                        ) -> list[str]:
    """The 'file not found' errors a missing build configuration causes, counted rather than
    listed, and the notes saying what to add; or the notes alone."""
    if not unfound:
        return [f"  note: {note}" for note in guessing]
    plural = "s" if len(unfound) > 1 else ""
    shown = ", ".join(sorted({_quoted(d.message) for d in unfound})[:5])
    return [f"  {len(unfound)} 'file not found' error{plural} ({shown}) not listed: "
            f"{cause}{' '.join(guessing)}"]


def _quoted(message: str) -> str:
    """The header a "'x.h' file not found" message names."""
    return message.split(" file not found")[0]


async def project_diagnostics(session: LspSession, ctx: CallContext) -> ToolResult:
    """Each language's own checker over the run's cwd, summarized and bounded."""
    run = session.run
    marked = [spec for spec in session.pool.specs.values()
              if spec.enabled and spec.find_root(run.cwd, run.cwd)]
    # A server that yields to another one here (ty to basedpyright) leaves its check to it too.
    options = [option for option in await session.availability(run.cwd / "_", marked)
               if option.yielded_to is None]
    marked = [option.spec for option in options]
    checks = [spec for spec in marked if spec.project_check or spec.open_project_sources]
    # A server that guesses how the project builds (clangd without compile_commands.json):
    # the cause of its 'file not found' errors, said first, with how to make one.
    guessing = [build_config_note(session, option) for option in options
                if option.ok and option.guesses_build and option.spec in checks]
    if not checks and marked:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"No project check exists for {', '.join(s.name for s in marked)}: it has "
                        "no whole-project checker here. Pass a file instead of '*' (diagnostics "
                        "are per file).")
    if not checks:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "No project check applies: the run's cwd has no root marker of a language "
                        "with a checker (pyproject.toml, package.json, tsconfig.json, "
                        "compile_flags.txt, ...). Pass a file instead of '*'.")
    found: list[FileDiagnostic] = []
    summary: dict[str, Any] = {}
    for index, spec in enumerate(checks, 1):
        name = spec.project_check[0] if spec.project_check else spec.name
        run.events.publish("lsp_progress", run_id=run.id, call_id=ctx.call_id,
                           check=name, step=index, of=len(checks), state="started")
        started = time.perf_counter()
        try:
            if spec.project_check:
                items = await run_project_check(spec, run.cwd, run.relpath,
                                                session.limits.project_check_timeout_seconds)
                items = await asyncio.to_thread(_without_outside_content, session, items)
            else:
                items = await _check_through_server(session, spec)
        except ProjectCheckError as exc:
            summary[name] = {"error": str(exc)}
        else:
            # Checkers that read notebooks themselves flag IPython syntax and count cells
            # their own way: notebooks are checked below, as `lsp diagnostics` checks one.
            items = [item for item in items if not is_notebook_path(item.path)]
            found.extend(items)
            summary[name] = {
                "errors": sum(d.severity == "error" for d in items),
                "warnings": sum(d.severity == "warning" for d in items),
                "seconds": round(time.perf_counter() - started, 2),
            }
        run.events.publish("lsp_progress", run_id=run.id, call_id=ctx.call_id,
                           check=name, step=index, of=len(checks), state="done")
    if notebooks := await _check_notebooks(session):
        found.extend(notebooks[0])
        summary["notebooks"] = notebooks[1]
    unfound = [d for d in found if guessing and "file not found" in d.message]
    found = [d for d in found if d not in unfound]
    limit = session.limits.max_diagnostics
    found.sort(key=lambda d: (d.severity != "error", d.path, d.cell or 0, d.line))
    by_file: dict[str, int] = {}
    for item in found:
        by_file[item.path] = by_file.get(item.path, 0) + 1
    head = ["Project check: " + "; ".join(
        f"{name}: {s['error']}" if "error" in s else
        f"{name}: {s['errors']} errors, {s['warnings']} warnings"
        for name, s in summary.items())]
    head += _build_config_lines(unfound, guessing,
                                "the cause is the missing compile database. ")
    if unchecked := summary.get("notebooks", {}).get("unchecked"):
        head.append(f"  notebooks not checked: {', '.join(unchecked[:10])} (call lsp "
                    "diagnostics on each to see why)")
    head += [f"  {d.describe()}" for d in found[:limit]]
    if len(found) > limit:
        head.append(f"  [cut: showing {limit} of {len(found)}; files with most: " + ", ".join(
            f"{p} ({n})" for p, n in sorted(by_file.items(), key=lambda kv: -kv[1])[:10]) + "]")
    return ToolResult.success("\n".join(head), {
        "checks": summary, "diagnostics": [d.to_json() for d in found[:limit]],
        "total": len(found), "by_file": by_file, "truncated": len(found) > limit,
        "build_config": guessing, "files_not_found": [d.to_json() for d in unfound[:limit]],
    })


def _without_outside_content(session: LspSession, items: list[FileDiagnostic]
                             ) -> list[FileDiagnostic]:
    """A checker may follow a symlinked folder out of the root: such files keep their place in
    the list, not their messages (which quote code)."""
    inside: dict[str, bool] = {}
    kept = []
    for item in items:
        if item.path not in inside:
            inside[item.path] = session.contained(session.run.cwd / item.path) is not None
        kept.append(item if inside[item.path] else dataclasses.replace(
            item, code="", message=f"({OUTSIDE_ROOT}: not shown)"))
    return kept


async def _check_notebooks(session: LspSession
                          ) -> tuple[list[FileDiagnostic], dict[str, Any]] | None:
    """The diagnostics of the notebooks under the cwd, by cell, and their summary; None when
    there are none."""
    listed = await session.notebooks_under(session.run.cwd)
    if listed is None:
        return [], {"error": f"more than {session.limits.max_project_sources} notebooks to "
                    "check; raise LanguageServerSupervisor.max_project_sources or pass them "
                    "one at a time"}
    if not listed:
        return None
    started = time.perf_counter()

    def readable() -> tuple[list[Path], list[str]]:
        kept, invalid = [], []
        for path in listed:
            try:
                session.document_now(path)
            except (FilesError, LspError):  # not a notebook (yet): named, not fatal
                invalid.append(session.run.relpath(path))
            else:
                kept.append(path)
        return kept, invalid

    notebooks, invalid = await asyncio.to_thread(readable)
    reports = await session.diagnostics_many(notebooks, save=False)
    items = [item for report in reports for item in report.items]
    summary: dict[str, Any] = {
        "errors": sum(d.severity == "error" for d in items),
        "warnings": sum(d.severity == "warning" for d in items),
        "seconds": round(time.perf_counter() - started, 2),
    }
    unchecked = invalid + [session.run.relpath(r.path) for r in reports if not r.complete]
    if unchecked:
        summary["unchecked"] = unchecked
    return items, summary


async def _check_through_server(session: LspSession, spec: ServerSpec) -> list[FileDiagnostic]:
    """A language without a checker of its own (C/C++): its server over every source under
    the cwd, bounded in files by `project_sources_max` and in time by `diagnostics_timeout`."""
    binary = await session.pool.binary(spec)
    if binary is None:
        raise ProjectCheckError(f"{spec.command[0]} not found on PATH or in the Python "
                                "environment's bin folder")
    server = session.server_at(spec, session.run.cwd, binary)
    sources = await session.project_sources(server)
    if sources is None:
        raise ProjectCheckError(f"more than {session.limits.max_project_sources} source files "
                                "to open; raise LanguageServerSupervisor.max_project_sources or "
                                "pass files one at a time")
    reports = await session.diagnostics_many(sources, save=False)
    unread = [session.run.relpath(r.path) for r in reports if not r.complete]
    if unread:
        raise ProjectCheckError(f"{spec.name} did not finish {', '.join(unread[:10])} in time; "
                                "call again shortly")
    return [item for report in reports for item in report.items]
