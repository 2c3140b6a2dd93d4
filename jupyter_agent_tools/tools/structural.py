"""ast_grep, ast_edit, resolve: structural search and staged rewrites (needs the parser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..runtime import CallContext, ErrorCode, Resource, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..runtime.limits import bound_text
from ..structural import errors
from ..structural.astgrep import ENGINE as AST_GREP
from ..structural.edits import ABSENT, StagedEdit
from ..structural.languages import AST_GREP_LANGUAGES, GRAMMARS_INSTALL, pack_installed
from ..structural.pattern import PatternSummary
from ..structural.session import StructuralSession
from .outputs import AstGrepOutput, ResolveOutput, StagedEditOutput
from .search import HIDDEN_HELP, MAX_RESULTS_CAP, refuse_skipped_folder

_PATTERN_HELP = (
    "One piece of code in the target language (ast-grep pattern syntax); $NAME matches one "
    "node, $$$NAME zero or more siblings, $_ any node. A repeated $NAME must capture the same "
    "code. Whitespace never matters; trailing parts of a node may be left out (`if ($C) "
    "{ $$$B }` also finds an if/else)."
)
_DIFF_TEXT_CHARS = 12_000
_MAX_LISTED_ERRORS = 50


def _session(ctx: CallContext) -> StructuralSession:
    return ctx.run.resources[Resource.PARSER]


_GRAMMAR_EXAMPLES = "python, javascript, typescript, tsx, rust, go, c, cpp, java, dart"


def _tool_error(exc: errors.StructuralError) -> ToolError:
    """What a structural error means to the agent: its contract code and what to do next."""
    invalid = ErrorCode.INVALID_ARGUMENTS
    match exc:
        case errors.PathNotFound(path=path):
            return ToolError(ErrorCode.NOT_FOUND,
                             f"{path} does not exist. Check the path with glob.")
        case errors.LanguageMismatch(path=path, notebook_language=own, asked=asked):
            return ToolError(invalid, f"{path} is a {own} notebook (its kernelspec says so), "
                             f"not {asked}: omit `language`, or pass {own}.")
        case errors.UnknownLanguage(language=language, close=close):
            hint = f" Close ids: {', '.join(close)}." if close else ""
            more = ("" if pack_installed() else " Only ast-grep's 27 languages are installed; "
                    f"tree-sitter-language-pack adds 145 more (to add it: {GRAMMARS_INSTALL}).")
            return ToolError(invalid, f"Unknown language {language!r}.{hint} Use a grammar id "
                             f"of tree-sitter-language-pack, e.g. {_GRAMMAR_EXAMPLES}.{more}")
        case errors.GrammarPackNeeded(language=language, install=install):
            return ToolError(ErrorCode.UNAVAILABLE,
                             f"Structural search in {language} needs tree-sitter-language-pack "
                             "(its grammars for 145 more languages than ast-grep's 27), which "
                             f"is not installed; to add it: {install}. Use grep meanwhile.",
                             data={"language": language, "install": install})
        case errors.LanguageNotInferred(filename=filename):
            return ToolError(invalid, f"Cannot infer the language of {filename!r} from its "
                             "extension; pass `language` (e.g. python, javascript, typescript, "
                             "rust).")
        case errors.LanguageRequired():
            return ToolError(invalid, "`language` is required when `path` is a folder (e.g. "
                             f"{_GRAMMAR_EXAMPLES}); or pass a file path to infer it from the "
                             "extension.")
        case errors.NoExtensions(language=language):
            return ToolError(invalid, f"No file extensions are known for {language!r}; pass a "
                             "file path.")
        case errors.NotANotebook(path=path):
            return ToolError(invalid, f"{path} is not a notebook (not nbformat JSON); read it to "
                             "see what it holds.")
        case errors.NoGrammar(path=path, language=language):
            return ToolError(invalid, f"{path} is a {language} notebook and there is no "
                             f"{language} grammar; structural search does not cover it. Use "
                             "grep.")
        case errors.TooLong(what=what, length=length, limit=limit):
            return ToolError(invalid, f"The {what} is {length} characters, over the "
                             f"{limit}-character limit (c.ParserProvider.max_{what}_chars). "
                             f"Write a shorter {what}: $$$NAME stands for any run of code.")
        case errors.UnparseablePattern(pattern=pattern, language=language, reason=reason,
                                       contexts=contexts):
            shown = pattern.strip() if len(pattern) <= 200 else pattern.strip()[:200] + "…"
            if contexts == [AST_GREP]:
                return ToolError(
                    ErrorCode.UNPARSEABLE_PATTERN,
                    f"The pattern {shown!r} does not parse as {language}: {reason}. Write it as "
                    f"one complete piece of valid {language} code (a statement, an expression "
                    "or a declaration) with $NAME / $$$NAME where code varies, and check "
                    "brackets and quotes are balanced.",
                    data={"contexts_tried": contexts, "language": language},
                )
            tried = ", ".join(contexts) or "none"
            return ToolError(
                ErrorCode.UNPARSEABLE_PATTERN,
                f"The pattern {shown!r} does not parse as {language} ({reason}); contexts "
                f"tried: {tried}. Write it as valid {language} code with $NAME / $$$NAME where "
                "code varies, and check brackets and quotes are balanced.",
                data={"contexts_tried": contexts, "language": language},
            )
        case errors.UnboundMetavariables(unbound=unbound, bound=bound):
            binds = (f"it binds {', '.join('$' + name for name in bound)}" if bound
                     else "it binds none")
            return ToolError(invalid, f"The rewrite uses {', '.join(unbound)}, which the pattern "
                             f"does not bind ({binds}); nothing was staged. Use only the "
                             "pattern's metavariables in the rewrite, or name them in the "
                             "pattern.", data={"unbound": unbound, "bound": bound})
        case errors.TooManyReplacements(total=total, limit=limit):
            return ToolError(invalid, f"The pattern matches {total} places, over the "
                             f"{limit}-replacement limit of one edit. Narrow `path` or the "
                             "pattern.")
        case errors.ChangedWhileComputing(path=path, notebook=notebook):
            also = " (or is no longer a valid notebook)" if notebook else ""
            return ToolError(ErrorCode.STALE_EDIT, f"{path} changed while the edit was being "
                             f"computed{also}. Call ast_edit again.")
        case errors.RewriteNotEncodable(path=path, encoding=encoding):
            return ToolError(ErrorCode.FAILED, f"{path} is {encoding} text, and the rewrite "
                             "puts characters there that this encoding cannot hold; files "
                             "keep their encoding, so nothing was staged. Use characters it "
                             "has (or the language's escapes), or convert the file to UTF-8 "
                             "first with bash (iconv).", data={"encoding": encoding})
        case errors.RewriteHitsMagics(path=path, reason=reason):
            return ToolError(invalid, f"In {path}: {reason} Nothing was staged; narrow the "
                             "pattern so it matches code around the magics, or edit that cell "
                             "with `edit`.")
        case errors.RewriteBreaksSyntax(language=language, broken=broken):
            first = broken[0]
            more = f" (and {len(broken) - 1} more files)" if len(broken) > 1 else ""
            # In a notebook, the place is the cell and the line within it, as ast_grep says.
            where = (f"at {_place({**first, 'start': (first['line'], first['column'])})}"
                     if first.get("cell") else f"of {first['file']} at line {first['line']}")
            return ToolError(invalid, f"The rewrite breaks the {language} syntax {where}{more}; "
                             "nothing was staged. Check the rewrite's brackets and quotes, and "
                             "that it is valid code where each match stands.",
                             data={"broken_files": broken})
        case errors.UnknownEdit(edit_id=edit_id):
            return ToolError(ErrorCode.UNKNOWN_EDIT, f"This run has no staged edit {edit_id!r}. "
                             "Use the edit_id that ast_edit returned in this run, or stage the "
                             "change again.")
        case errors.EditAlreadyResolved(edit_id=edit_id, status=status):
            return ToolError(ErrorCode.UNKNOWN_EDIT, f"{edit_id} was already resolved "
                             f"({status}); an edit resolves once. Call ast_edit again to stage "
                             "a new change.")
        case errors.StaleEdit(edit_id=edit_id, stale_files=stale):
            return ToolError(ErrorCode.STALE_EDIT, f"{', '.join(stale)} changed since {edit_id} "
                             "was staged; nothing was written. Call ast_edit again to stage the "
                             "change on the current content.",
                             data={"edit_id": edit_id, "stale_files": stale})
        case errors.SearchFailed(reason=reason, memory_limit=str()):
            return ToolError(ErrorCode.FAILED,
                             f"The structural search failed: {reason}. Search fewer files at "
                             "once (narrow `path`), or give the server more memory; "
                             "c.ParserProvider.max_tree_cache_mb bounds the parsed trees kept "
                             "between searches.")
        case errors.SearchFailed(reason=reason, timed_out=timed_out):
            return ToolError(ErrorCode.TIMEOUT if timed_out else ErrorCode.FAILED,
                             f"The structural search failed: {reason}. Narrow `path` and try "
                             "again.")
    return ToolError(ErrorCode.FAILED, f"The structural search failed: {exc}. Try "
                     "again, or use grep meanwhile.")


class AstGrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description=_PATTERN_HELP)
    path: str | None = Field(None, description="File or folder (default: the working directory).")
    language: str | None = Field(
        None, description="Grammar id (python, javascript, typescript, tsx, rust, go, c, cpp, "
        "java, dart, ...). Inferred from the extension when path is a file.")
    max_results: int = Field(50, ge=1, le=MAX_RESULTS_CAP, description=(
        f"Most matches to return (at most {MAX_RESULTS_CAP})."))
    hidden: bool = Field(False, description=HIDDEN_HELP)


# How a skip reads where its reason needs more than its name.
_SKIPPED = {"not_utf8": "{n} not UTF-8 (ast-grep reads UTF-8 only, as its CLI does: convert "
                        "with iconv, or change it with edit, which keeps its encoding)",
            "hidden": "{n} hidden (pass hidden: true to search them)"}


def _skip_text(skipped: dict[str, int]) -> str:
    return ", ".join(_SKIPPED.get(what, "{n} " + what.replace("_", " ")).format(n=n)
                     for what, n in skipped.items() if n)


class AstGrep(Tool):
    name = "ast_grep"
    tier = Tier.READ
    requires = frozenset({Resource.WORKDIR, Resource.PARSER})
    description = (
        "Find code by structure with an ast-grep pattern, e.g. `print($A)` or "
        "`isinstance($X, $$$T)`: the same matches as the ast-grep CLI (its engine), except "
        "Dart, languages ast-grep lacks and patterns of several statements, which a built-in "
        "matcher searches (the answer notes it). An empty answer says what the pattern "
        "parsed as. Answers file:line:column, the matched code and captures. "
        "Searches the code cells of notebooks in that language too (`nb.ipynb [cell 3] "
        "4:5`: line within the cell; IPython magics never match). A folder search looks at "
        "the files the CLI gives the language (its extensions). "
        ".gitignored, binary and oversized files are skipped, and hidden folders unless "
        "`hidden: true`, as the CLI does."
    )
    Args = AstGrepArgs
    Output = AstGrepOutput
    path_fields = ("path",)

    def label(self, args: AstGrepArgs) -> str:
        return f"ast_grep {args.pattern}"

    def precheck(self, ctx: CallContext, args: AstGrepArgs) -> None:
        refuse_skipped_folder(ctx, args.path)

    async def call(self, ctx: CallContext, args: AstGrepArgs) -> ToolResult:
        try:
            outcome = await _session(ctx).search(args.pattern, args.path, args.language,
                                                 limit=args.max_results, hidden=args.hidden)
        except errors.StructuralError as exc:
            raise _tool_error(exc) from None
        answer = outcome.answer
        matches = [{**m, "file": _rel(ctx, m["file"])} for m in answer["matches"]]
        total = answer["total"]
        language = outcome.pattern.language
        lines = [f"{total} match{'es' if total != 1 else ''} in {answer['files_with_matches']} "
                 f"file(s) ({outcome.files_searched} {language} files searched)."]
        for m in matches:
            first = m["text"].split("\n", 1)[0]
            shown = ", ".join(f"{k}={v.splitlines()[0] if v else ''}"
                              for k, v in m["captures"].items())
            lines.append(f"{_place(m)}: {first}" + (f"   [{shown}]" if shown else ""))
        if total > len(matches):
            raise_it = (f"raise max_results (up to {MAX_RESULTS_CAP}) or "
                        if args.max_results < MAX_RESULTS_CAP else "")
            lines.append(f"[{total - len(matches)} more matches not shown; {raise_it}narrow "
                         "the pattern or path]")
        parse_errors = [_rel(ctx, p) for p in answer["parse_errors"][:_MAX_LISTED_ERRORS]]
        if parse_errors:
            lines.append(f"[{len(answer['parse_errors'])} file(s) have syntax errors, matches "
                         f"there may be incomplete: {', '.join(parse_errors[:5])}]")
        skipped = _skip_text(outcome.skipped)
        if skipped:
            lines.append(f"[skipped: {skipped}]")
        lines += _pattern_notes(outcome.pattern, total)
        return ToolResult.success("\n".join(lines), {
            "matches": matches, "total": total, "more": total - len(matches),
            "files_searched": outcome.files_searched, "language": language,
            "context": outcome.pattern.context, "pattern_kind": outcome.pattern.kind,
            "engine": outcome.pattern.engine, "pattern_error_node": outcome.pattern.parse_error,
            "skipped": outcome.skipped,
            "parse_errors": parse_errors,
        })


def _pattern_notes(pattern: PatternSummary, total: int) -> list[str]:
    """What the agent should know of how the pattern parsed and which matcher searched."""
    notes = []
    if pattern.engine != AST_GREP:
        if pattern.language in AST_GREP_LANGUAGES:
            notes.append("[searched as a run of sibling nodes by the built-in matcher: ast-grep "
                         "(and its CLI) take a pattern of one node only]")
        else:
            notes.append(f"[searched by the built-in tree-sitter matcher: ast-grep is not used "
                         f"for {pattern.language}, so matches may differ from the ast-grep CLI]")
    if pattern.parse_error is not None:
        notes.append(f"[the pattern parsed as {pattern.kind} with an ERROR node at "
                     f"`{pattern.parse_error}`; ast-grep matches it anyway, as its CLI does: "
                     "check these are the matches you meant]")
    elif total == 0:
        notes.append(f"[the pattern parsed as a {pattern.kind} node; if you meant other code, "
                     "write the pattern as that code (e.g. a complete statement)]")
    return notes


def _place(match: dict) -> str:
    """`file:4:5`, or `analysis.ipynb [cell 3] 4:5` in a notebook (line within the cell)."""
    line, column = match["start"]
    if "cell" in match:
        return f"{match['file']} [cell {match['cell']}] {line}:{column}"
    return f"{match['file']}:{line}:{column}"


def _rel(ctx: CallContext, path: str) -> str:
    return ctx.run.relpath(Path(path))


class AstEditArgs(ToolArgs):
    pattern: str = Field(min_length=1, description=_PATTERN_HELP)
    rewrite: str = Field(description="Replacement code; $NAME and $$$NAME insert the captures.")
    path: str | None = Field(None, description="File or folder (default: the working directory).")
    language: str | None = Field(
        None, description="Grammar id; inferred from the extension when path is a file.")
    hidden: bool = Field(False, description=(
        "Also rewrite in hidden files and folders (.github, ...), which are skipped by "
        "default as the ast-grep CLI skips them. A hidden path named in `path` is searched "
        "either way; .git and .ipynb_checkpoints never are."))


class AstEdit(Tool):
    name = "ast_edit"
    tier = Tier.WRITE
    requires = frozenset({Resource.WORKDIR, Resource.PARSER})
    description = (
        "Stage a structural rewrite: every match of `pattern` becomes `rewrite` with the "
        "captures filled in (only the pattern's metavariables; a rewrite that breaks the "
        "syntax is refused). Nothing is written: the answer carries a diff and an edit_id; "
        "call resolve with it to accept or discard."
    )
    Args = AstEditArgs
    Output = StagedEditOutput
    path_fields = ("path",)

    def label(self, args: AstEditArgs) -> str:
        return f"ast_edit {args.pattern} -> {args.rewrite}"

    def precheck(self, ctx: CallContext, args: AstEditArgs) -> None:
        refuse_skipped_folder(ctx, args.path)

    async def call(self, ctx: CallContext, args: AstEditArgs) -> ToolResult:
        try:
            edit = await _session(ctx).stage(args.pattern, args.rewrite, args.path,
                                             args.language, hidden=args.hidden)
        except errors.StructuralError as exc:
            raise _tool_error(exc) from None
        if not edit.files:
            unread = {why: n for why, n in edit.skipped.items() if why in _SKIPPED and n}
            return ToolResult.success(
                f"No matches for {args.pattern!r} (it parsed as a {edit.pattern_kind} node; if "
                "you meant other code, write the pattern as that code); nothing was staged."
                + (f" [skipped: {_skip_text(unread)}]" if unread else ""),
                {"edit_id": None, "replacements": 0, "files": {}, "diff": "",
                 "pattern_kind": edit.pattern_kind, "skipped": unread})
        return staged_edit_answer(
            edit, f"{edit.replacements} replacements in {len(edit.counts())} files",
            {"replacements": edit.replacements,
             **({"upgraded_notebooks": edit.upgrades()} if edit.upgrades() else {})},
            _upgrade_note(edit.upgrades(), "accepting saves"))


def staged_edit_answer(edit: StagedEdit, headline: str, data: dict[str, Any],
                       note: str = "") -> ToolResult:
    """The answer to a staged edit (ast_edit's, a code action's, a reviewed rename's): what it
    changes per file, the diff (bounded in the text, whole in data) and the id `resolve`
    takes. `note` follows the per-file lines."""
    counts = edit.counts()
    diff = edit.diff
    shown, _ = bound_text(diff, _DIFF_TEXT_CHARS, what="diff")
    text = (f"(proposed) {headline} … call resolve with edit_id \"{edit.id}\" (action accept "
            "or discard); nothing is written until then.\n"
            + "\n".join(f"  {path}: {n}" for path, n in counts.items())
            + note + "\n\n" + shown)
    return ToolResult.success(
        text, {"edit_id": edit.id, **data, "files": counts, "diff": diff},
        blocks=[{"type": "text", "text": text},
                {"type": "diff", "edit_id": edit.id, "diff": diff}])


class ResolveArgs(ToolArgs):
    edit_id: str = Field(min_length=1, description='The id ast_edit (or lsp code_actions with apply) '
                         'returned, e.g. "edit_1".')
    action: Literal["accept", "discard"] = Field(
        description="accept writes every file (all or nothing); discard drops the edit.")


class Resolve(Tool):
    name = "resolve"
    tier = Tier.WRITE
    requires = frozenset({Resource.WORKDIR, Resource.PARSER})
    description = (
        "Accept or discard an edit staged by ast_edit, lsp code_actions (`apply`) or lsp_rename "
        "under review. "
        "Accept writes all its files or none, "
        "and refuses (stale_edit) if any file changed since staging."
    )
    Args = ResolveArgs
    Output = ResolveOutput
    # Accepting writes off the loop; one resolve at a time per run, so an edit resolves once.
    parallel_safe = False

    def precheck(self, ctx: CallContext, args: ResolveArgs) -> None:
        try:  # an unknown or resolved edit is refused unasked
            _session(ctx).staged(args.edit_id)
        except errors.StructuralError as exc:
            raise _tool_error(exc) from None

    def label(self, args: ResolveArgs) -> str:
        return f"resolve {args.edit_id} {args.action}"

    async def call(self, ctx: CallContext, args: ResolveArgs) -> ToolResult:
        try:
            edit, written = await _session(ctx).resolve(args.edit_id, args.action == "accept")
        except errors.StructuralError as exc:
            raise _tool_error(exc) from None
        # Files a language server's edit creates: announced to the servers as created.
        ctx.wrote(*written, created=[c.path for c in edit.files if c.snapshot == ABSENT])
        counts = edit.counts()
        data: dict[str, Any] = {"edit_id": edit.id, "action": args.action, "status": edit.status.value,
                "files": counts, "replacements": edit.replacements}
        if args.action == "discard":
            return ToolResult.success(f"Discarded {edit.id}; no file was changed.", data)
        upgrades = edit.upgrades()
        if upgrades:
            data["upgraded_notebooks"] = upgrades
        return ToolResult.success(
            f"Accepted {edit.id}: wrote {edit.replacements} replacements in {len(counts)} files "
            f"({', '.join(counts)})." + _upgrade_note(upgrades, "saved"), data)


def _upgrade_note(upgrades: dict[str, str], done: str) -> str:
    """What a change does to the format of old notebooks (nbformat 3) it writes."""
    return "".join(f"\n[{path} is nbformat {old}: {done} it as nbformat 4.5, as JupyterLab "
                   "does when it saves an old notebook]" for path, old in upgrades.items())
