"""Transcript replay: re-issue a run's recorded calls against a fresh run, report what changed.

The transcript is what `GET agent-tools/api/runs/{id}/transcript` answers (a JSON list of
entries: tool, label, args, origin, ok, error_code, text). Each recorded call is made again,
in order, and its result compared on three things: ok, the error code, and the text (cut to
the length the transcript kept). Two kinds of volatility are not differences:

- ids a tool makes up (an `edit_id`, a `worker_id`, ...): learned from the new result's data
  where the recorded text had another token in the same place, then substituted in later
  arguments and texts, so `ast_edit` → `resolve {edit_id}` replays;
- measured durations ("12.5 ms", "0.31 s").

Texts that depend on timing are differences too (a language server that had not reported
yet when a write returned): replay on a machine that serves the same tools, and read a text
difference before calling it a regression.

Calls made from inside an `eval` cell (origin "cell") are not re-issued: replaying their cell
makes them again. Replay a transcript against the same files it was recorded on (a fresh copy
of the project); differences are what the tools now answer differently.

A call whose arguments were too large for the run's transcript (`args_omitted_bytes`, past
`c.Runtime.max_transcript_bytes`) was recorded without them: a transcript with one is refused
whole (`UnreplayableTranscript`), since re-issuing the others without it would compare against
files it never wrote.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..runtime.results import ToolResult

#: Chars of text a transcript keeps per call (see runtime/transcript.py).
TRANSCRIPT_TEXT_CHARS = 2_000
NESTED_ORIGINS = frozenset({"cell"})

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?ms\b|\b\d+\.\d+\s?s\b")
_TOKEN = re.compile(r"[\w-]+|\s+|[^\w\s]")
_MIN_SUBSTITUTED_ID = 6  # shorter ids are replaced only where a value equals them exactly

Call = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]


@dataclass
class Difference:
    """One recorded call whose result changed on one of ok / error_code / text."""

    number: int  # 1-based position in the transcript
    tool: str
    label: str
    field: str
    recorded: Any
    replayed: Any

    def describe(self, max_lines: int = 40) -> str:
        head = f"[{self.number}] {self.tool} {self.label!r}: {self.field} differs"
        if self.field != "text":
            return f"{head}: recorded {self.recorded!r}, now {self.replayed!r}"
        diff = list(difflib.unified_diff(str(self.recorded).splitlines(),
                                         str(self.replayed).splitlines(),
                                         "recorded", "replayed", lineterm="", n=1))
        if len(diff) > max_lines:
            diff = [*diff[:max_lines], f"… ({len(diff) - max_lines} more diff lines)"]
        return head + "\n" + "\n".join("    " + line for line in diff)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReplayReport:
    replayed: int
    nested: int
    differences: list[Difference]

    def to_json(self) -> dict[str, Any]:
        return {"replayed": self.replayed, "nested_not_reissued": self.nested,
                "differences": [d.to_json() for d in self.differences]}


class UnreplayableTranscript(ValueError):
    """The transcript holds calls recorded without their arguments: it cannot be replayed."""


def check_replayable(entries: list[dict[str, Any]]) -> None:
    """Raise `UnreplayableTranscript` when a call replay would re-issue has no arguments kept."""
    omitted = [(number, entry) for number, entry in enumerate(entries, 1)
               if entry.get("args_omitted_bytes") is not None and _reissued(entry)]
    if not omitted:
        return
    calls = "; ".join(f"[{number}] {entry['tool']} {entry.get('label') or ''!r} "
                      f"({entry['args_omitted_bytes']:,} bytes)" for number, entry in omitted[:5])
    more = f" and {len(omitted) - 5} more" if len(omitted) > 5 else ""
    raise UnreplayableTranscript(
        f"This transcript cannot be replayed: {len(omitted)} call(s) had arguments larger than "
        f"the run's transcript keeps, so they were recorded without them: {calls}{more}. "
        "Record the run again with a larger c.Runtime.max_transcript_bytes."
    )


def _reissued(entry: dict[str, Any]) -> bool:
    # Nested calls are left to their cell; an unfinished call has no result to compare.
    return entry.get("origin") not in NESTED_ORIGINS and entry.get("ok") is not None


def load_transcript(path: Path | str) -> list[dict[str, Any]]:
    """Read a transcript file: a list of entries, or an object with a "transcript" list."""
    payload = json.loads(Path(path).read_text(encoding="utf-8"))
    entries = payload.get("transcript") if isinstance(payload, dict) else payload
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "tool" in e for e in entries):
        raise ValueError(f"{path} is not a transcript: expected the JSON list that "
                         "GET runs/{id}/transcript answers.")
    return entries


async def replay(entries: list[dict[str, Any]], call: Call) -> ReplayReport:
    """Re-issue every finished top-level call of `entries` through `call`, in order.

    Raises `UnreplayableTranscript`, before any call, when one was recorded without its
    arguments.
    """
    check_replayable(entries)
    ids: dict[str, str] = {}
    differences: list[Difference] = []
    replayed = nested = 0
    for number, entry in enumerate(entries, 1):
        if entry.get("origin") in NESTED_ORIGINS:
            nested += 1
            continue
        if entry.get("ok") is None:  # the call had not finished when the transcript was taken
            continue
        result = await call(entry["tool"], _substitute(entry.get("args") or {}, ids))
        replayed += 1
        recorded_text = _normalise(entry.get("text") or "")
        replayed_text = _normalise(result.text[:TRANSCRIPT_TEXT_CHARS])
        ids.update(_learn_ids(_apply_ids(recorded_text, ids), replayed_text, result.data))
        recorded_text = _apply_ids(recorded_text, ids)
        label = entry.get("label") or entry["tool"]
        checks = [("ok", bool(entry.get("ok")), result.ok),
                  ("error_code", entry.get("error_code"), result.code),
                  ("text", recorded_text, replayed_text)]
        for field, before, now in checks:
            if before != now:
                differences.append(Difference(number, entry["tool"], label, field, before, now))
                if field == "ok":
                    break  # a flipped outcome explains the code and the text
    return ReplayReport(replayed, nested, differences)


def _normalise(text: str) -> str:
    return _DURATION.sub("<duration>", text).rstrip()


def _ids_in(data: Any, depth: int = 0) -> set[str]:
    """String values of keys named `id` or `*_id` in a result's data."""
    found: set[str] = set()
    if depth > 4:
        return found
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and (key == "id" or key.endswith("_id")):
                found.add(value)
            else:
                found |= _ids_in(value, depth + 1)
    elif isinstance(data, list):
        for value in data[:200]:
            found |= _ids_in(value, depth + 1)
    return found


def _learn_ids(recorded: str, replayed: str, data: dict[str, Any]) -> dict[str, str]:
    """Pair each new id in `replayed` with the token the recorded text had in its place."""
    new_ids = _ids_in(data)
    if not new_ids:
        return {}
    old_tokens, new_tokens = _TOKEN.findall(recorded), _TOKEN.findall(replayed)
    learned: dict[str, str] = {}
    matcher = difflib.SequenceMatcher(a=old_tokens, b=new_tokens, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for old, new in zip(old_tokens[i1:i2], new_tokens[j1:j2], strict=True):
            if new in new_ids and old != new:
                learned[old] = new
    return learned


def _apply_ids(text: str, ids: dict[str, str]) -> str:
    for old, new in ids.items():
        text = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, text)
    return text


def _substitute(value: Any, ids: dict[str, str]) -> Any:
    """The recorded arguments with the ids of the recorded run replaced by the new run's."""
    if isinstance(value, str):
        if value in ids:
            return ids[value]
        return _apply_ids(value, {o: n for o, n in ids.items() if len(o) >= _MIN_SUBSTITUTED_ID})
    if isinstance(value, list):
        return [_substitute(item, ids) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item, ids) for key, item in value.items()}
    return value


async def replay_embedded(entries: list[dict[str, Any]], root: str, cwd: str = ".",
                          surface: str = "full") -> tuple[ReplayReport, list[dict[str, Any]]]:
    """Replay in a fresh embedded run over `root`/`cwd`; also return the new transcript.

    A transcript with `ask_user` gets a scripted human that picks each card's first option
    (as the demo's does); one with `vibe_*` calls gets vibe mode.
    """
    import asyncio

    from ..runtime import Runtime

    check_replayable(entries)  # before a runtime starts for nothing
    tools = {entry.get("tool") for entry in entries}
    runtime = Runtime(root_dir=root)
    answering = None
    try:
        space = "replay" if "ask_user" in tools else None
        run = await runtime.create_run(cwd=cwd, surface=surface, conversation_id="replay",
                                       vibe=any(str(t).startswith("vibe_") for t in tools),
                                       space=space)
        if space is not None and "ask_user" in run.tool_names():
            answering = asyncio.ensure_future(_first_option_human(await runtime.connect_human(space)))

        async def call(tool: str, args: dict[str, Any]) -> ToolResult:
            return await run.call(tool, args)

        report = await replay(entries, call)
        return report, run.transcript.to_json()
    finally:
        if answering is not None:
            answering.cancel()
        await runtime.shutdown()


async def _first_option_human(human: Any) -> None:
    try:
        while True:
            card = await human.next_card()
            options = card.get("options") or []
            if options:
                await human.answer(card["id"], answer=options[0]["label"])
            else:
                await human.answer(card["id"], text="ok")
    finally:
        await human.close()


async def replay_command(options: Any) -> int:
    """`jupyter agent-tools replay TRANSCRIPT`: 0 when every result matched, 1 otherwise."""
    import sys

    try:
        entries = load_transcript(options.transcript)
        check_replayable(entries)
    except (OSError, ValueError) as exc:  # UnreplayableTranscript is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report, transcript = await replay_embedded(entries, options.root, options.cwd, options.surface)
    if options.save:
        Path(options.save).write_text(json.dumps(transcript, indent=2, default=str))
    if options.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        for difference in report.differences:
            print(difference.describe())
        changed = len({d.number for d in report.differences})
        print(f"{report.replayed} calls replayed ({report.nested} nested calls left to their "
              f"cells): {changed} differ.")
    return 1 if report.differences else 0
