"""The parser resource's own API: typed errors with the facts; the tools word them."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.runtime import Resource
from jupyter_agent_tools.structural.errors import UnboundMetavariables, UnknownEdit
from jupyter_agent_tools.structural.session import StructuralSession


async def test_a_rewrite_with_unbound_metavariables_names_them(run, files):
    files({"a.py": "print(1)\n"})
    session: StructuralSession = run.resources[Resource.PARSER]
    with pytest.raises(UnboundMetavariables) as unbound:
        await session.stage("print($A)", "log($A, $B)", "a.py", None)
    assert unbound.value.unbound == ["$B"] and unbound.value.bound == ["A"]
    result = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "log($A, $B)",
                                         "path": "a.py"})
    assert result.code == "invalid_arguments" and "nothing was staged" in result.error["message"]


def test_an_unknown_edit_is_named(run):
    session: StructuralSession = run.resources[Resource.PARSER]
    with pytest.raises(UnknownEdit) as unknown:
        session.staged("edit_9")
    assert unknown.value.edit_id == "edit_9"
