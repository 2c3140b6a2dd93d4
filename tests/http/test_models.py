"""The request models, as the MCP endpoint uses RunRequest: from URL query parameters."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jupyter_agent_tools.http.models import RunRequest


def test_run_options_from_query_parameters():
    request = RunRequest.from_query({"cwd": "src", "surface": "plan", "vibe": "true",
                                     "resources": "lsp,parser", "space": "lab",
                                     "sandbox": "read-only", "network": "false"})
    assert request.create_run_options() == {
        "cwd": "src", "surface": "plan", "conversation_id": None, "vibe": True,
        "approvals": None, "space": "lab", "resources": ["lsp", "parser"],
        "kernel_id": None, "notebook": None, "sandbox": "read-only", "network": False,
    }
    assert RunRequest.from_query({}).create_run_options()["cwd"] == "."


@pytest.mark.parametrize("query", [
    {"vibe": "perhaps"}, {"surface": "everything"}, {"resources": "lsp,gpu"},
    {"cwd": "a" * 5000}, {"colour": "red"}, {"origin": "mcp"},
])
def test_bad_query_parameters_are_refused_by_name(query):
    with pytest.raises(ValidationError) as refused:
        RunRequest.from_query(query)
    assert next(iter(query)) in str(refused.value)


def test_json_bodies_are_strict():
    with pytest.raises(ValidationError):
        RunRequest.model_validate_json(b'{"vibe": "true"}')
    assert RunRequest.model_validate_json(b'{"vibe": true, "origin": "notebook"}').origin == "notebook"
