"""The diff of a rewrite, made from its replacements' spans: difflib's format and hunks,
in time proportional to the file (difflib's matching went quadratic on repeated lines)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from jupyter_agent_tools.structural import diff as diff_module
from jupyter_agent_tools.structural.diff import rewrite_diff
from jupyter_agent_tools.structural.edits import unified_diff
from jupyter_agent_tools.structural.rewrite import Replacement, apply, non_overlapping


def rewritten(source: str, pattern: str, template: str, encoding: str = "utf-8"
              ) -> tuple[bytes, bytes, list[tuple[int, int]], list[tuple[int, int]]]:
    """`source` with each match of the regex `pattern` (its group 1 captured as $A) replaced
    by `template`, as ast_edit applies it: the bytes before and after, and the spans."""
    data = source.encode(encoding)
    text = data.decode(encoding)
    replacements = []
    for found in re.finditer(pattern, text):
        start, end = (len(text[:i].encode(encoding)) for i in found.span())
        captured = tuple(len(text[:i].encode(encoding)) for i in found.span(1))
        replacements.append(Replacement(start, end, {"A": captured}))
    chosen = non_overlapping(replacements)
    after, written = apply(template, data, chosen, encoding)
    return data, after, [(r.start, r.end) for r in chosen], written


CASES = {
    "one line": ("import x\n\nprint(a)\ny = 2\n", r"print\((\w+)\)", "logging.info($A)"),
    "far apart: two hunks": ("".join(f"v{i} = {i}\n" for i in range(40)) + "print(a)\n"
                             + "".join(f"w{i} = {i}\n" for i in range(40)) + "print(b)\n",
                             r"print\((\w+)\)", "log($A)"),
    "close: one hunk": ("print(a)\nx = 1\ny = 2\nz = 3\nw = 4\nprint(b)\n",
                        r"print\((\w+)\)", "log($A)"),
    "two on a line": ("a = f(1) + f(2)\nb = 3\n", r"f\((\d)\)", "g($A)"),
    "no newline at the end": ("x = 1\nprint(a)", r"print\((\w+)\)", "log($A)"),
    "deleted": ("x = 1\nprint(a)\ny = 2\n", r"print\((\w+)\)\n", ""),
    "lines added": ("def f():\n    print(a)\n    return 1\n", r"print\((\w+)\)",
                    "log($A)\nlog($A)"),
    "multi-line match, last line kept": (
        "call(\n    first,\n    second,\n)\nz = 0\n", r"call\(\n    (first),", "other(\n    $A,"),
    "non-ASCII": ("s = 'é'\nprint('à')\nt = 'ü'\n", r"print\(('à')\)", "log($A, 'ö')"),
    "at the very start": ("print(a)\nx = 1\n", r"print\((\w+)\)", "log($A)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_diff_is_difflibs_for_plain_rewrites(case):
    source, pattern, template = CASES[case]
    before, after, replaced, written = rewritten(source, pattern, template)
    assert after != before
    assert rewrite_diff("m.py", before, after, replaced, written) == \
        unified_diff("m.py", before, after)


def test_a_file_in_a_one_byte_encoding():
    before, after, replaced, written = rewritten(
        "# caf\xe9\nprint('cr\xe8me')\nx = 1\n", r"print\(('cr\xe8me')\)", "show($A, 'd\xe9j\xe0')",
        "cp1252")
    diff = rewrite_diff("legacy.py", before, after, replaced, written, "cp1252")
    assert diff == unified_diff("legacy.py", before, after, "cp1252")
    assert "+show('cr\xe8me', 'd\xe9j\xe0')\n" in diff


def repeated_blocks(lines: int = 7_000, block: int = 100, every: int = 233) -> str:
    """A file of one block of lines again and again, with a print call now and then: each
    line comes back 70 times, which sends difflib's matching quadratic."""
    out = ["def work():\n"]
    while len(out) < lines:
        out.append("    print(v1)\n" if len(out) % every == 0
                   else f"    v{len(out) % block} = v{len(out) % block} + 1\n")
    return "".join(out)


def test_a_file_of_repeated_lines_gets_a_diff_that_applies(tmp_path: Path):
    before, after, replaced, written = rewritten(repeated_blocks(), r"print\((\w+)\)",
                                                 "logging.info($A)")
    diff = rewrite_diff("m.py", before, after, replaced, written)
    # One hunk per change (they are 233 lines apart), each -1 +1 line with its context.
    assert diff.count("\n@@ ") + diff.startswith("@@") == 30
    assert diff.count("\n-    print(v1)\n+    logging.info(v1)\n") == 30
    # `patch`, a program that knows nothing of ours, makes the file after of it.
    (tmp_path / "m.py").write_bytes(before)
    (tmp_path / "change.diff").write_text(diff)
    done = subprocess.run(["patch", "-p1", "--batch", "-i", "change.diff"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "m.py").read_bytes() == after


def test_spans_that_do_not_map_onto_lines_fall_back_to_difflib():
    # A lone "\r" ends a line; after the rewrite, the next replacement's "\n" follows it:
    # one line break "\r\n" where the spans say two lines. The lines do not line up with
    # the spans, so the diff is difflib's.
    before = b"a\rb\n"
    chosen = [Replacement(0, 1, {"A": (0, 1)}), Replacement(2, 3, {"A": (2, 3)})]
    after, written = apply("\n$A", before, chosen)
    assert after == b"\na\r\nb\n"
    old, new = before.decode().splitlines(True), after.decode().splitlines(True)
    assert diff_module._opcodes(old, new, [(0, 1), (2, 3)], written) is None
    assert rewrite_diff("m.py", before, after, [(0, 1), (2, 3)], written) == \
        unified_diff("m.py", before, after)


async def test_ast_edit_diffs_a_file_of_repeated_lines(run, files):
    files({"big.py": repeated_blocks()})
    res = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "logging.info($A)",
                                      "path": "big.py"})
    assert res.ok, res.text
    assert res.data["replacements"] == 30
    assert res.data["diff"].count("\n-    print(v1)\n+    logging.info(v1)\n") == 30
