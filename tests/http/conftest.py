"""A real server with small request limits, and a client that sends raw bytes."""

from __future__ import annotations

import json

import pytest
from http_helpers import MAX_REQUEST_BYTES


@pytest.fixture
def jp_server_config(jp_server_config):
    return {**jp_server_config, "AgentToolsApp": {"max_request_bytes": MAX_REQUEST_BYTES}}


@pytest.fixture
def send(jp_fetch):
    """`await send("POST", "runs", b"...")` → (status, JSON body or None, headers): raw bytes in."""

    async def call(method: str, path: str, body: bytes | None = None, **params):
        response = await jp_fetch(
            *path.split("/"), method=method, body=body, params=params or None,
            raise_error=False, allow_nonstandard_methods=True,
        )
        payload = json.loads(response.body) if response.body else None
        return response.code, payload, response.headers

    return call
