"""glob and grep's glob speak ripgrep's dialect: checked against `rg` itself on real code.

The corpus is jupyter_server's own source (a dependency, so on every machine), copied to a
temporary folder with .gitignore rules of ours over its real files. `glob` is compared with
`rg --files --glob`, keeping the files plain `rg --files` lists (a glob never brings back an
ignored file; rg's own `--glob` overrides ignore rules); `grep` with its `glob` argument is
compared with `rg --glob` as it is. Any difference fails, naming the pattern and the first
differing path. Each comparison runs twice: as rg runs (hidden files and folders skipped),
and with `hidden: true` against `rg --hidden`. grep's matching options (case_insensitive,
multiline, before/after, output_mode files and count) are compared with rg's own flags.

Also here: pathological globs (what made the old pattern library backtrack for seconds while
holding the interpreter lock) answer without stalling the event loop.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import jupyter_server
import pytest

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.files import ripgrep

# The loop-stall bound of issue 25: while any glob runs, the loop is never held longer.
MAX_LOOP_STALL_S = 0.05

# Globs over the whole corpus: suffixes, braces (nested too), `**`, classes, names that are
# also folder names, anchored and dir-only forms, negation, case, pathological stars.
GLOBS = [
    "*.py", "**/*.py", "*.{py,yaml}", "*.{html,css,ico}", "jupyter_server/services/**/*.py",
    "jupyter_server/services/*/handlers.py", "*handler*", "*kernel*", "*utils*", "kernels",
    "services/", "[a-c]*.py", "[!a-m]*.py", "?????.py", "**/services/**", "!*.py", "*.PY",
    "**", "*", "jupyter_server/auth/*", "/jupyter_server/auth/*.py", "**/kernels/*.py",
    "*.{py,{yaml,html}}", "***/***", "*.[ch]*", "static/**", "*.cfg", "**/i18n/**",
    "{auth,base}/*.py", "**/*_*.py", "**/event_schemas/*/*.yaml", ".*", "*manager.py",
    "**/connection/*", "*.{po,pot}",
]
# (folder, glob): a glob is relative to the folder searched; a folder that is ignored is
# listed when named.
GLOBS_BELOW = [
    ("jupyter_server/services", "*.py"), ("jupyter_server/services", "kernels/*.py"),
    ("jupyter_server/services", "*/handlers.py"), ("jupyter_server/static", "*"),
    ("jupyter_server/services/contents", "*manager*"),
]
# (regex, glob) for grep.
GREPS = [
    ("^import ", "*.py"), ("def ", "jupyter_server/services/**/*.py"),
    (r"class \w+Handler", "*handler*"), ("kernel", "*.{html,yaml}"), ("Copyright", "*utils*"),
    ("msgid", "*.{po,pot}"), ("json", "*.cfg"), ("async def", "**/handlers.py"),
    ("self", "[a-h]*.py"), ("return", "!*.py"), ("import", "*.{py,{yaml,html}}"),
    ("^from", "**"), ("manager", "*manager.py"), ("kernel", "kernels"),
]
# .gitignore rules of ours over the corpus's real files: a folder, suffixes, an anchored
# folder, a deeper file that ignores by pattern and takes one back.
GITIGNORES = {
    ".gitignore": "static/\n*.cfg\n/jupyter_server/i18n/\n*.map\n",
    "jupyter_server/services/.gitignore": "connection/\n*manager.py\n!contents/manager.py\n",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rg-corpus")
    shutil.copytree(Path(jupyter_server.__file__).parent, root / "jupyter_server",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name, rules in GITIGNORES.items():
        (root / name).write_text(rules)
    # Hidden folders and files (a workflow, an editor's settings, a dotfile beside code).
    for name, text in HIDDEN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


HIDDEN = {
    ".github/workflows/ci.yml": "name: kernel tests\non: push\n# import kernel\n",
    "jupyter_server/.vscode/settings.json": '{"kernel": "python"}\n',
    "jupyter_server/services/.hidden_helper.py": "import os\n\ndef kernel():\n    return os\n",
    ".env": "KERNEL=python\n",
}


def _rg(cwd: Path, *args: str, hidden: bool = False) -> subprocess.CompletedProcess[str]:
    """rg as a user runs it (hidden files and folders listed with `hidden`), .gitignore
    honoured outside git too."""
    rg = ripgrep.find_rg()
    assert rg is not None
    return subprocess.run([rg, "--no-config", *(["--hidden"] if hidden else []),
                           "--no-require-git", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)


def _path_order(paths: set[str]) -> list[str]:
    return sorted(paths, key=lambda path: PurePosixPath(path).parts)


def _rg_files(cwd: Path, glob: str, prefix: str = "", hidden: bool = False) -> list[str] | str:
    """What `glob` should list: rg's files matching `glob` that plain rg lists too (or rg's
    error message)."""
    matched = _rg(cwd, "--files", "--glob", glob, hidden=hidden)
    if matched.returncode == 2:
        return matched.stderr
    visible = set(_rg(cwd, "--files", hidden=hidden).stdout.splitlines())
    return _path_order({prefix + path for path in matched.stdout.splitlines() if path in visible})


def _rg_matches(cwd: Path, regex: str, glob: str,
                hidden: bool = False) -> list[tuple[str, int]] | str:
    found = _rg(cwd, "--json", "--glob", glob, "--regexp", regex, hidden=hidden)
    if found.returncode == 2 and "No files were searched" not in found.stderr:
        return found.stderr
    lines = [json.loads(line) for line in found.stdout.splitlines()]
    matches = {(line["data"]["path"]["text"], line["data"]["line_number"])
               for line in lines if line["type"] == "match"}
    return sorted(matches, key=lambda match: (PurePosixPath(match[0]).parts, match[1]))


def _difference(what: str, ours: list, theirs: list) -> str | None:
    if ours == theirs:
        return None
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
              min(len(ours), len(theirs)))
    mine = ours[at] if at < len(ours) else "(nothing more)"
    rgs = theirs[at] if at < len(theirs) else "(nothing more)"
    return (f"{what}: first difference at #{at}: ours {mine!r}, rg {rgs!r} "
            f"({len(ours)} vs {len(theirs)})")


@pytest.mark.parametrize("hidden", [False, True])
async def test_glob_and_grep_list_what_ripgrep_lists(corpus: Path, hidden: bool):
    runtime = Runtime(root_dir=str(corpus), max_glob_results=100_000, max_grep_results=100_000)
    try:
        run = await runtime.create_run()
        mismatches: list[str] = []
        hiding = {"hidden": True} if hidden else {}
        for glob in GLOBS:
            expected = _rg_files(corpus, glob, hidden=hidden)
            result = await run.call("glob", {"pattern": glob} | hiding)
            if isinstance(expected, str):  # rg refuses it: so must we
                if result.code != "invalid_arguments":
                    mismatches.append(f"glob {glob!r}: rg refuses it ({expected.strip()}), "
                                      f"ours answered {result.text[:200]!r}")
                continue
            assert result.ok, f"glob {glob!r}: {result.error}"
            assert result.data["total"] == len(result.data["files"])
            found = _difference(f"glob {glob!r}", result.data["files"], expected)
            if found:
                mismatches.append(found)
        for folder, glob in GLOBS_BELOW:
            expected = _rg_files(corpus / folder, glob, prefix=f"{folder}/", hidden=hidden)
            assert not isinstance(expected, str), expected
            result = await run.call("glob", {"pattern": glob, "path": folder} | hiding)
            found = _difference(f"glob {glob!r} in {folder}", result.data["files"], expected)
            if found:
                mismatches.append(found)
        for regex, glob in GREPS:
            expected_matches = _rg_matches(corpus, regex, glob, hidden=hidden)
            assert not isinstance(expected_matches, str), expected_matches
            result = await run.call("grep", {"pattern": regex, "glob": glob} | hiding)
            assert result.ok and result.data["complete"], result.text[-300:]
            found = _difference(f"grep {regex!r} --glob {glob!r}",
                                [(m["file"], m["line"]) for m in result.data["matches"]],
                                expected_matches)
            if found:
                mismatches.append(found)
        for regex in ("kernel", "^import "):  # no glob: hidden files follow `hidden` alone
            found = _rg(corpus, "--json", "--regexp", regex, hidden=hidden)
            expected_lines = _json_matches(found.stdout)
            result = await run.call("grep", {"pattern": regex} | hiding)
            assert result.ok and result.data["complete"], result.text[-300:]
            difference = _difference(f"grep {regex!r}", [(m["file"], m["line"])
                                                          for m in result.data["matches"]],
                                     expected_lines)
            if difference:
                mismatches.append(difference)
        assert mismatches == [], "\n".join(mismatches)
        # The corpus exercises it: hidden files are where `hidden` says.
        listed = (await run.call("glob", {"pattern": "*.yml"} | hiding)).data["files"]
        assert (".github/workflows/ci.yml" in listed) is hidden
    finally:
        await runtime.shutdown()


def _json_matches(stdout: str) -> list[tuple[str, int]]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    matches = {(line["data"]["path"]["text"], line["data"]["line_number"])
               for line in lines if line["type"] == "match"}
    return sorted(matches, key=lambda match: (PurePosixPath(match[0]).parts, match[1]))


# grep's options against rg's flags: (arguments, rg's flags).
OPTIONS = [
    ({"pattern": "KERNEL", "case_insensitive": True}, ["--ignore-case"]),
    ({"pattern": "Kernel"}, []),
    ({"pattern": r"def \w+\(self\):\n\s+return", "multiline": True},
     ["--multiline", "--multiline-dotall"]),
    ({"pattern": r"class \w+.*?:\n.*?\"\"\"", "multiline": True},
     ["--multiline", "--multiline-dotall"]),
    ({"pattern": "raise web.HTTPError", "before": 2, "after": 1},
     ["--before-context", "2", "--after-context", "1"]),
    ({"pattern": "kernel", "case_insensitive": True, "hidden": True, "after": 3},
     ["--ignore-case", "--hidden", "--after-context", "3"]),
]


async def test_grep_options_match_ripgreps_flags(corpus: Path):
    runtime = Runtime(root_dir=str(corpus), max_grep_results=100_000)
    try:
        run = await runtime.create_run()
        mismatches: list[str] = []
        for args, flags in OPTIONS:
            found = _rg(corpus, "--json", *flags, "--regexp", args["pattern"])
            assert found.returncode in (0, 1), found.stderr
            messages = [json.loads(line) for line in found.stdout.splitlines()]
            expected = sorted(
                ((m["data"]["path"]["text"], m["data"]["line_number"], m["type"] == "context")
                 for m in messages if m["type"] in ("match", "context")),
                key=lambda item: (PurePosixPath(item[0]).parts, item[1]))
            result = await run.call("grep", args)
            assert result.ok and result.data["complete"], (args, result.text[-300:])
            ours = sorted([(m["file"], m["line"], False) for m in result.data["matches"]]
                          + [(c["file"], c["line"], True)
                             for c in result.data.get("context", [])],
                          key=lambda item: (PurePosixPath(item[0]).parts, item[1]))
            assert ours, args  # the corpus exercises each option
            difference = _difference(f"grep {args}", ours, expected)
            if difference:
                mismatches.append(difference)
            # Counts and files: rg -c and rg -l.
            counted = _rg(corpus, "--count", *[f for f in flags if "context" not in f
                                               and not f.isdigit()],
                          "--regexp", args["pattern"])
            rg_counts = _path_order_counts(counted.stdout)
            count = await run.call("grep", args | {"output_mode": "count"})
            assert count.ok and "counts" in count.data, (args, count.text[-500:])
            ours_counts = [(c["file"], c["count"]) for c in count.data["counts"]]
            difference = _difference(f"grep {args} count", ours_counts, rg_counts)
            if difference:
                mismatches.append(difference)
            files = await run.call("grep", args | {"output_mode": "files"})
            assert files.ok and "files" in files.data, (args, files.text[-500:])
            difference = _difference(f"grep {args} files", files.data["files"],
                                     [file for file, _ in rg_counts])
            if difference:
                mismatches.append(difference)
        assert mismatches == [], "\n".join(mismatches)
    finally:
        await runtime.shutdown()


def _path_order_counts(stdout: str) -> list[tuple[str, int]]:
    pairs = [line.rsplit(":", 1) for line in stdout.splitlines()]
    return sorted(((file, int(n)) for file, n in pairs),
                  key=lambda item: PurePosixPath(item[0]).parts)


# 64 characters each. The first three each took the old glob (pathspec, a backtracking
# regex under the interpreter lock) past 10 s on one path of this tree.
PATHOLOGICAL = ["***/" * 16, "*a" * 32, "**/*" * 16, "{a,b}" * 12 + "****",
                "[a-z]*" * 10 + "****", "*" * 63 + "a", "**/" * 21 + "*"]


def _long_names(root: Path) -> None:
    for index in range(10):
        folder = root.joinpath(*[f"{'a' * 20}{depth}" for depth in range(4)], f"b{index}")
        folder.mkdir(parents=True)
        for number in range(20):
            (folder / f"{'a' * 60}{number}.txt").write_text("")


async def _longest_stall(stop: asyncio.Event, interval: float = 0.005) -> float:
    """How much later than asked a short sleep on the loop wakes, at worst, until `stop`."""
    loop = asyncio.get_running_loop()
    longest = 0.0
    while not stop.is_set():
        asked = loop.time()
        await asyncio.sleep(interval)
        longest = max(longest, loop.time() - asked - interval)
    return longest


async def test_pathological_globs_answer_without_stalling_the_loop(runtime, root):
    assert all(len(pattern) == 64 for pattern in PATHOLOGICAL)
    _long_names(root)
    run = await runtime.create_run(surface="plan")  # a read-only planner may call glob
    await run.call("glob", {"pattern": "*.txt"})  # rg's threads for this root, started once
    # Up to three bursts, the best counts: on a loaded shared machine the OS alone delays a
    # waking thread by tens of ms now and then; a loop held by the glob (the old library
    # held it for seconds on these) is held in every burst.
    stalls = []
    for _ in range(3):
        stop = asyncio.Event()
        probe = asyncio.create_task(_longest_stall(stop))
        await asyncio.sleep(0.02)
        results = await asyncio.gather(*[run.call("glob", {"pattern": pattern})
                                         for pattern in PATHOLOGICAL * 2])
        stop.set()
        stalls.append(await probe)
        for pattern, result in zip(PATHOLOGICAL * 2, results, strict=True):
            assert result.ok, (pattern, result.error)
            assert result.data["files"] == _rg_files(root, pattern), pattern
        if stalls[-1] <= MAX_LOOP_STALL_S:
            break
    figures = ", ".join(f"{stall * 1000:.1f} ms" for stall in stalls)
    print(f"longest event-loop stall while {len(PATHOLOGICAL) * 2} pathological globs ran: "
          f"{figures}")
    assert min(stalls) <= MAX_LOOP_STALL_S, f"the event loop stalled {figures}"
