"""FileWalker: .gitignore below the starting point, races with writers, bounds."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.files import FileWalker


def _names(root, paths):
    return [p.relative_to(root).as_posix() for p in paths]


def test_ignore_rules_apply_below_the_start_not_to_it(root):
    (root / ".gitignore").write_text("scratch/\n*.log\n")
    inner = root / "scratch" / "copy"
    inner.mkdir(parents=True)
    (inner / "a.py").write_text("")
    (inner / "b.log").write_text("")
    walker = FileWalker(root)
    assert _names(root, walker.files(root)) == [".gitignore"]
    assert walker.stats.ignored == 1
    assert _names(root, FileWalker(root).files(inner)) == ["scratch/copy/a.py"]
    assert _names(root, FileWalker(root).files(root / "scratch")) == ["scratch/copy/a.py"]


def test_a_deeper_gitignore_can_take_a_rule_back(root):
    (root / ".gitignore").write_text("*.log\n")
    (root / "logs").mkdir()
    (root / "logs" / ".gitignore").write_text("!keep.log\n")
    (root / "logs" / "keep.log").write_text("")
    (root / "logs" / "drop.log").write_text("")
    found = _names(root, FileWalker(root).files(root))
    assert found == [".gitignore", "logs/.gitignore", "logs/keep.log"]


def test_a_file_that_vanishes_mid_walk_is_skipped_and_counted(root):
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(name)
    walker = FileWalker(root)
    files = walker.files(root)
    first = next(files)  # the folder is listed now; c.txt goes before the walk reaches it
    (root / "c.txt").unlink()
    rest = list(files)
    assert _names(root, [first, *rest]) == ["a.txt", "b.txt"]
    assert walker.stats.vanished == 1 and "1 vanished" in walker.stats.describe()


def test_a_walk_stops_at_its_entry_bound_and_says_so(root):
    for index in range(10):
        (root / f"f{index}.txt").write_text("")
    walker = FileWalker(root, max_entries=4)
    assert len(list(walker.files(root))) == 4
    assert walker.stats.truncated and "stopped at its bound" in walker.stats.describe()


async def test_list_files_is_the_walk_awaited_off_the_loop(root):
    (root / "a.txt").write_text("")
    walker = FileWalker(root)
    assert _names(root, await walker.list_files(root)) == ["a.txt"]


@pytest.mark.timeout(60)  # Python's `re` would take hours on this line: the test would hang
def test_a_gitignore_line_made_to_backtrack_is_matched_in_linear_time(root):
    """A .gitignore is anyone's text (a cloned repository's, an agent's write): its lines are
    matched by RE2, so no line holds the interpreter lock (and the server) for long."""
    (root / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\n*.log\n")
    (root / ("a" * 200 + ".py")).write_text("")
    (root / ("a" * 20 + "b")).write_text("")
    (root / "x.log").write_text("")
    walker = FileWalker(root)
    assert _names(root, walker.files(root)) == [".gitignore", "a" * 200 + ".py"]
    assert walker.stats.ignored == 2  # aaa…ab by the long line, x.log by the short one
