"""An in-process Jupyter server with the extension, and MCP clients of the official SDK for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


@pytest.fixture
def mcp_session(mcp_url, auth_headers):
    """`async with mcp_session(**query) as session:` an initialized SDK `ClientSession`.

    Extra keyword arguments of `ClientSession` (e.g. `elicitation_callback`) go in `client`.
    """

    @asynccontextmanager
    async def open_session(path: str = "agent-tools/mcp", *, headers: dict | None = None,
                           client: dict | None = None, terminate_on_close: bool = True,
                           **query: Any) -> AsyncIterator[ClientSession]:
        http = httpx2.AsyncClient(headers=headers if headers is not None else auth_headers,
                                  timeout=httpx2.Timeout(120, read=300))
        async with http, streamable_http_client(
            mcp_url(path, **query), http_client=http, terminate_on_close=terminate_on_close,
        ) as (read, write), ClientSession(read, write, **(client or {})) as session:
            await session.initialize()
            yield session

    return open_session


@pytest.fixture
def glob_breaking_its_schema(runtime_of, monkeypatch):
    """The server's `glob` answers `files` as a string, against its declared output schema:
    the control that shows a client's check of structured content can fail."""
    glob = next(tool for tool in runtime_of.registry if tool.name == "glob")
    honest = glob.call

    async def lying(ctx, args):
        result = await honest(ctx, args)
        result.data["files"] = "not a list"
        return result

    monkeypatch.setattr(glob, "call", lying)
