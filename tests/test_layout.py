"""The test tree itself: pytest imports test modules by basename, so names must be unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_every_test_module_has_a_name_of_its_own():
    names = Counter(path.name for path in Path(__file__).parent.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
