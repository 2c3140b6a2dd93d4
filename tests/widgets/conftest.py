"""Widget fixtures: the live server's URL and token, and a panel session connected to it."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_agent_tools.notebook import open_panel

WAIT = 30.0  # seconds: a bound on waits that should end at once, never an assertion


@pytest.fixture
def server(jp_serverapp, jp_http_port, jp_base_url):
    """(url, token) of the live test server, as a notebook kernel would find them."""
    return f"http://localhost:{jp_http_port}{jp_base_url}", jp_serverapp.identity_provider.token


@pytest.fixture
def panel_session(server, jp_asyncio_loop):
    """`open(**kwargs)` → an AgentSession whose panel is connected; closed after the test.

    open_panel blocks on HTTP, and this test's loop is the server's: it runs on a thread.
    """
    sessions = []

    async def open_(**kwargs):
        url, token = server
        session = await asyncio.to_thread(open_panel, url=url, token=token, display=False, **kwargs)
        sessions.append(session)
        return session

    yield open_
    for session in sessions:
        jp_asyncio_loop.run_until_complete(asyncio.to_thread(session.close))


async def _until(predicate, what="the condition"):
    async def poll():
        while not predicate():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), WAIT)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what} did not happen within {WAIT:g} s") from None


@pytest.fixture
def until():
    """`await until(predicate, what)`: let the server loop run until it holds (bounded)."""
    return _until
