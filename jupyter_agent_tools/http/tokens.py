"""The user's agent tokens: mint one (shown once), list them, revoke one.

Only the user may (the server's token, a browser session, a hub token): an agent token is
refused on these routes (auth.py: no `agent_token_methods`), so no agent mints or lists
credentials.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..agent_tokens import AgentTokens, Ceiling, normalize_cwd
from ..runtime import ErrorCode, ToolError
from .base import AgentToolsHandler, ApiError, Operation
from .models import AgentTokenDescriptor, TokenCreated, TokenRequest

TOKENS_RESOURCE = "agent_tools:tokens"


class _TokensBase(AgentToolsHandler):
    auth_resource = TOKENS_RESOURCE

    @property
    def tokens(self) -> AgentTokens:
        tokens: AgentTokens | None = self.settings.get("agent_tools_tokens")
        if tokens is None:
            raise ApiError(409, ErrorCode.UNAVAILABLE,
                           "This server has no agent tokens (the extension did not set them up).")
        if tokens.failed is not None:
            raise ApiError(409, ErrorCode.UNAVAILABLE, f"Agent tokens cannot be used: "
                           f"{tokens.failed}.")
        return tokens

    def unavailable(self, exc: Exception) -> ApiError:
        return ApiError(409, ErrorCode.UNAVAILABLE,
                        f"The agent token file {self.tokens.store_path} cannot be used "
                        f"({type(exc).__name__}: {exc}).")


class TokensHandler(_TokensBase):
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("The user's agent tokens: ceilings and expiry, never the tokens",
                         {200: list[AgentTokenDescriptor]}, errors=frozenset({409})),
        # 400: a cwd that is no folder under the root; 409: the token file cannot be used.
        "post": Operation("Mint an agent token with a ceiling (the token is in this answer "
                          "only)", {201: TokenCreated}, body=TokenRequest,
                          errors=frozenset({409})),
    }

    @web.authenticated
    @authorized
    async def get(self) -> None:
        try:
            tokens = await self.tokens.tokens()
        except (OSError, sqlite3.Error) as exc:
            raise self.unavailable(exc) from None
        await self.respond([token.to_json() for token in tokens])

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = await self.parse_body(TokenRequest)
        try:
            cwd = normalize_cwd(request.cwd)
        except ValueError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, str(exc)) from None
        ceiling = Ceiling(request.surface, request.approvals, cwd, request.space)
        try:
            token, secret = await self.tokens.create(request.label, ceiling,
                                                     request.expires_seconds)
        except (OSError, sqlite3.Error) as exc:
            raise self.unavailable(exc) from None
        await self.respond({**token.to_json(), "token": secret}, status=201)


class TokenHandler(_TokensBase):
    operations: ClassVar[dict[str, Operation]] = {
        "delete": Operation("Revoke an agent token: its next request is refused (401)",
                            {204: None}, errors=frozenset({409})),
    }

    @web.authenticated
    @authorized
    async def delete(self, token_id: str) -> None:
        try:
            revoked = await self.tokens.revoke(token_id)
        except (OSError, sqlite3.Error) as exc:
            raise self.unavailable(exc) from None
        if not revoked:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"No agent token {token_id!r}. List them with GET "
                            "agent-tools/api/tokens.")
        await self.respond(None, status=204)


handlers: list[tuple[str, type]] = [
    (r"agent-tools/api/tokens", TokensHandler),
    (r"agent-tools/api/tokens/(?P<token_id>[0-9a-f]{16})", TokenHandler),
]
