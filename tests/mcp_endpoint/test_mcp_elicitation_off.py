"""`c.McpEndpoint.use_elicitation = False`: cards go to the run's space even for a client that
answers elicitation."""

from __future__ import annotations

import asyncio

import mcp_types as types
import pytest

WAIT = 30  # seconds: a bound on waits that should end soon, never an assertion


@pytest.fixture
def jp_server_config(jp_server_config):
    return {**jp_server_config, "McpEndpoint": {"use_elicitation": False}}


async def test_cards_go_to_the_panel_though_the_client_elicits(mcp_session, runtime_of):
    asked: list[types.ElicitRequestParams] = []

    async def answer(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "postgres"})

    panel = await runtime_of.connect_human("lab")
    try:
        async with mcp_session(client={"elicitation_callback": answer}) as session:
            pending = asyncio.ensure_future(session.call_tool("ask_user", {
                "question": "Which database?",
                "options": [{"label": "sqlite"}, {"label": "postgres"}]}))
            card = await panel.next_card(timeout=WAIT)
            assert card["question"] == "Which database?"
            await panel.answer(card["id"], answer="sqlite")
            result = await asyncio.wait_for(pending, WAIT)
    finally:
        await panel.close()
    assert result.structured_content["selected"] == ["sqlite"]
    assert asked == []  # the client was never asked
