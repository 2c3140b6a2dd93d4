"""Runtime.connect_human: the typed way to the question port, and its refusal without one."""

from __future__ import annotations

import pytest

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.questions import QuestionPort
from jupyter_agent_tools.runtime import Resource, ToolError
from jupyter_agent_tools.runtime.runtime import HumanChannel

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"


async def test_the_question_port_is_the_runtimes_human_channel(root):
    runtime = Runtime(root_dir=str(root))
    try:
        port = runtime.provider(Resource.QUESTIONS)
        assert isinstance(port, QuestionPort) and isinstance(port, HumanChannel)
        async with await runtime.connect_human("lab") as human:
            assert human.pending() == []
            assert port.humans("lab") == 1
        assert port.humans("lab") == 0
    finally:
        await runtime.shutdown()


async def test_without_a_question_port_connecting_a_human_says_how_to_get_one(root):
    runtime = Runtime(root_dir=str(root), resource_providers=[PARSER])
    try:
        with pytest.raises(ToolError) as refused:
            await runtime.connect_human("lab")
        assert refused.value.code.value == "unavailable"
        assert "enable the 'questions' resource" in refused.value.message
    finally:
        await runtime.shutdown()
