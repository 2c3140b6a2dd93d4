"""The ripgrep runner: arguments it builds, and what it refuses to quote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jupyter_agent_tools.files import landlock, ripgrep

LIMITS = ripgrep.RipgrepLimits(timeout_seconds=30, max_output_bytes=1_000_000, max_results=10,
                               max_line_chars=200)


def _rg_output(*files: str) -> bytes:
    """What `rg --json` prints (compact JSON) for one matching line in each of `files`."""
    lines = []
    for name in files:
        lines.append({"type": "begin", "data": {"path": {"text": name}}})
        lines.append({"type": "match", "data": {"path": {"text": name},
                                                "lines": {"text": "needle\n"}, "line_number": 1}})
    lines.append({"data": {"stats": {}}, "type": "summary"})
    return b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def test_a_match_through_a_link_swapped_in_while_rg_ran_is_not_quoted(root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (root / "inside.txt").write_text("needle\n")
    # rg read these as a plain file and a plain folder; they are links out by the time it ends.
    (root / "was_a_file.txt").symlink_to(outside / "secret.txt")
    (root / "was_a_folder").symlink_to(outside, target_is_directory=True)
    query = ripgrep.RipgrepQuery(root=root, start=root, pattern="needle")
    stdout = _rg_output("inside.txt", "was_a_file.txt", "was_a_folder/secret.txt")
    output = ripgrep._Output(stdout, ripgrep._StderrTally(), kept_all=True, more_matches=0,
                             finished=True, returncode=0)
    outcome = ripgrep._parse(query, LIMITS, output)
    assert [m.file.name for m in outcome.matches] == ["inside.txt"]
    assert outcome.total == 1 and outcome.skipped["outside_root"] == 2


def test_rules_between_the_root_and_the_start_are_rebased_onto_the_root(root):
    (root / ".gitignore").write_text("*.log\n/dist\n")
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / ".gitignore").write_text("# generated\nbuild/\n/local.py\n!keep.log\n")
    rules = ripgrep._inherited_rules(root, root / "pkg" / "sub")
    assert rules == ["*.log", "/dist", "/pkg/**/build/", "/pkg/local.py", "!/pkg/**/keep.log"]
    assert ripgrep._inherited_rules(root, root) == []


def test_the_binary_is_the_one_installed_beside_python():
    found = ripgrep.find_rg()
    assert found is not None and Path(found).name == "rg"


async def test_one_thread_per_rg_finds_what_rgs_own_choice_finds(root):
    (root / "pkg").mkdir()
    for index in range(30):
        (root / "pkg" / f"m{index}.py").write_text(f"def f_{index}():\n    return {index}\n")
    found = []
    for threads in (0, 1):  # 0: rg's choice (a lone search); 1: one of several at once
        query = ripgrep.RipgrepQuery(root=root, start=root, pattern=r"return [12]\b",
                                     threads=threads)
        argv = ripgrep._filters(ripgrep.find_rg() or "rg", query, None,
                                output=ripgrep._SEARCH_OUTPUT, max_file_bytes=None)
        assert ("--threads" in argv) == bool(threads)
        outcome = await ripgrep.search(root, query, LIMITS)
        found.append([(m.file.name, m.line) for m in outcome.matches])
    assert found[0] == found[1] == [("m1.py", 2), ("m2.py", 2)]


@pytest.mark.skipif(not landlock.available(), reason="the kernel has no Landlock")
async def test_rg_cannot_read_out_of_the_root_through_a_folder_swapped_for_a_link(root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (root / "sub").mkdir()

    def query() -> ripgrep.RipgrepQuery:
        built = ripgrep.RipgrepQuery(root=root, start=root / "sub", pattern="needle")
        # An attacker's swap after every containment check, before rg opens the folder.
        shutil.rmtree(root / "sub")
        (root / "sub").symlink_to(outside, target_is_directory=True)
        return built

    outcome = await ripgrep.search(root, query, LIMITS)
    assert outcome.matches == [] and outcome.total == 0
    # Never read (the kernel refused), rather than read and then left unquoted.
    assert outcome.skipped.get("unreadable") == 1 and "outside_root" not in outcome.skipped


async def test_a_search_still_reads_everything_inside_the_root_and_its_notebooks(root):
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("needle = 1\n")
    (root / "pkg" / "b.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "code", "source": ["x = 1\n", "needle = 2"]}],
         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (root / ".gitignore").write_text("ignored/\n")
    query = ripgrep.RipgrepQuery(root=root, start=root / "pkg", pattern="needle")
    outcome = await ripgrep.search(root, query, LIMITS)
    assert [(m.file.name, m.cell, m.line) for m in outcome.matches] == [
        ("a.py", None, 1), ("b.ipynb", 1, 2)]
    assert "unreadable" not in outcome.skipped


def test_past_the_output_bound_matches_are_counted_until_the_time_bound(root, tmp_path):
    # A stand-in for rg that prints 2,000 matches (several pipe reads: markers split between
    # reads count once) and then never ends: the time bound stops the count.
    printed = tmp_path / "printed.json"
    printed.write_bytes(_rg_output(*[f"f{index:04}.txt" for index in range(2_000)]))
    limits = ripgrep.RipgrepLimits(timeout_seconds=1, max_output_bytes=2_000, max_results=10,
                                   max_line_chars=200)
    output = ripgrep._run(["sh", "-c", f"cat {printed}; sleep 30"], root, limits,
                          ripgrep._Handle())
    assert not output.kept_all and not output.finished
    assert len(output.stdout) <= 2_000 and output.stdout.endswith(b"\n")
    query = ripgrep.RipgrepQuery(root=root, start=root, pattern="needle")
    outcome = ripgrep._parse(query, limits, output)
    assert outcome.total == 2_000 and not outcome.complete
    assert 0 < len(outcome.matches) <= 10
