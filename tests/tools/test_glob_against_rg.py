"""glob and grep's glob speak ripgrep's dialect: checked against `rg` itself on real code.

The corpus is jupyter_server's own source (a dependency, so on every machine), copied to a
temporary folder with .gitignore rules of ours over its real files. `glob` is compared with
`rg --files --glob`, keeping the files plain `rg --files` lists (a glob never brings back an
ignored file; rg's own `--glob` overrides ignore rules); `grep` with its `glob` argument is
compared with `rg --glob` as it is. Any difference fails, naming the pattern and the first
differing path.

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
    return root


def _rg(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """rg as a user runs it: hidden files listed, .gitignore honoured outside git too."""
    rg = ripgrep.find_rg()
    assert rg is not None
    return subprocess.run([rg, "--no-config", "--hidden", "--no-require-git", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=60)


def _path_order(paths: set[str]) -> list[str]:
    return sorted(paths, key=lambda path: PurePosixPath(path).parts)


def _rg_files(cwd: Path, glob: str, prefix: str = "") -> list[str] | str:
    """What `glob` should list: rg's files matching `glob` that plain rg lists too (or rg's
    error message)."""
    matched = _rg(cwd, "--files", "--glob", glob)
    if matched.returncode == 2:
        return matched.stderr
    visible = set(_rg(cwd, "--files").stdout.splitlines())
    return _path_order({prefix + path for path in matched.stdout.splitlines() if path in visible})


def _rg_matches(cwd: Path, regex: str, glob: str) -> list[tuple[str, int]] | str:
    found = _rg(cwd, "--json", "--glob", glob, "--regexp", regex)
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


async def test_glob_and_grep_list_what_ripgrep_lists(corpus: Path):
    runtime = Runtime(root_dir=str(corpus), max_glob_results=100_000, max_grep_results=100_000)
    try:
        run = await runtime.create_run()
        mismatches: list[str] = []
        for glob in GLOBS:
            expected = _rg_files(corpus, glob)
            result = await run.call("glob", {"pattern": glob})
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
            expected = _rg_files(corpus / folder, glob, prefix=f"{folder}/")
            assert not isinstance(expected, str), expected
            result = await run.call("glob", {"pattern": glob, "path": folder})
            found = _difference(f"glob {glob!r} in {folder}", result.data["files"], expected)
            if found:
                mismatches.append(found)
        for regex, glob in GREPS:
            expected_matches = _rg_matches(corpus, regex, glob)
            assert not isinstance(expected_matches, str), expected_matches
            result = await run.call("grep", {"pattern": regex, "glob": glob})
            assert result.ok and result.data["complete"], result.text[-300:]
            found = _difference(f"grep {regex!r} --glob {glob!r}",
                                [(m["file"], m["line"]) for m in result.data["matches"]],
                                expected_matches)
            if found:
                mismatches.append(found)
        assert mismatches == [], "\n".join(mismatches)
    finally:
        await runtime.shutdown()


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
