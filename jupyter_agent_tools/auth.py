"""Run-token authentication: a worker process may reach its own run's routes, nothing else.

The runtime issues a token to a child run driven by an outside process (runtime/tokens.py).
A request whose `Authorization: token <t>` header carries such a token is that run's worker:

- on a route of that run (the route names its run `run_id`) with a verb the handler allows
  (`run_token_methods`), it is authenticated as a synthetic user `agent-run-<id>` and
  authorized by that scope alone;
- on any other route, or another run's, it is refused with 403;
- a request without a run token goes through jupyter_server's identity provider and
  authorizer exactly as before.

Run tokens are only accepted in the header, never as `?token=`: URLs end up in logs.

Agent tokens (`jat_…`, agent_tokens.py) are accepted by the same handlers' `prepare`, in the
header (and as `?token=` on the MCP route, for clients that cannot set one). A handler lets
one through only for the verbs it names (`agent_token_methods`; none by default), and on a
route of a run only for a run opened with that token. jupyter_server's identity provider does
not know them, so contents, kernels, sessions and terminals refuse them. A run opened or
joined with one is checked against its ceiling (`within_ceiling`, `check_join`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from jupyter_server.auth import Authorizer, User
from jupyter_server.base.call_context import CallContext as JupyterCallContext
from pydantic import BaseModel
from tornado import web

from .agent_tokens import PREFIX, AgentToken, AgentTokens, CeilingExceeded
from .runtime import ErrorCode, ToolError

ModelT = TypeVar("ModelT", bound=BaseModel)
MethodT = TypeVar("MethodT", bound=Callable[..., Any])

# The same shape jupyter_server's IdentityProvider accepts for its own token.
_AUTH_HEADER = re.compile(r"(token|bearer)\s+(.+)", re.IGNORECASE)


#: What an API client without a valid token is told (401): which header, and where a token
#: comes from. Agent tokens do not exist yet: the token is the server's own.
UNAUTHENTICATED_MESSAGE = (
    "No valid token: the request carried none, or one this server does not accept (wrong, "
    "expired or revoked). Send the header `Authorization: token <token>` (or `Authorization: "
    "Bearer <token>`) with every request. An agent's token is an agent token: the user makes "
    "one with `jupyter agent-tools token create` or in JupyterLab's agent-tools panel "
    "(Connect an agent, which also shows the MCP URL and the header to send). The user's own "
    "is the Jupyter server's (`jupyter server list` prints the server's URL with it); under "
    "JupyterHub, an API token from the hub (its Token page) that has access to this server."
)
#: The challenge of a 401 (RFC 6750): a bearer token in the Authorization header.
WWW_AUTHENTICATE = 'Bearer realm="jupyter-agent-tools"'


class Unauthenticated(web.HTTPError):
    """401: no identity could be established for the request (see UNAUTHENTICATED_MESSAGE)."""

    def __init__(self) -> None:
        super().__init__(401, UNAUTHENTICATED_MESSAGE)


class TokenChallenge:
    """Mixin for JupyterHandler subclasses: a request no one is authenticated by gets 401 with
    `WWW-Authenticate: Bearer` and a message saying what to send, instead of jupyter_server's
    403 (a POST: tornado's "'_xsrf' argument missing", which says nothing to an API client;
    a GET: a bare 403 in place of the login redirect).

    Nothing is let through that was refused before: the 401 is raised where jupyter_server
    has found no user and would refuse. A request that has a user (a browser's cookie
    session) still needs XSRF on a POST; a user the authorizer refuses still gets 403; and
    under JupyterHub a token the hub knows whose owner may not use this server stays 403.
    """

    def check_xsrf_cookie(self: Any) -> None:
        # JupyterHandler.prepare calls it once the user is known (tornado calls it earlier,
        # before there is one: jupyter_server's then returns at once, and so do we).
        if hasattr(self, "_jupyter_current_user") and self._unauthenticated():
            raise Unauthenticated()
        super().check_xsrf_cookie()  # type: ignore[misc]

    def get_login_url(self: Any) -> str:
        # tornado's @web.authenticated asks for it to redirect an unauthenticated GET.
        if self._unauthenticated():
            raise Unauthenticated()
        return super().get_login_url()  # type: ignore[misc]

    def _unauthenticated(self: Any) -> bool:
        """No user, and nobody known behind the request: its token (or cookie) is missing,
        wrong, expired or revoked."""
        if self.current_user:
            return False
        # JupyterHub's identity provider keeps the hub's answer here: a user (a valid token or
        # hub session) without access to this server is refused (403), not unauthenticated.
        return not getattr(self, "_cached_hub_user", None)


def ws_challenged(method: MethodT) -> MethodT:
    """jupyter_server's `ws_authenticated` for a WebSocket's GET, answering as the other
    routes do (TokenChallenge): no valid token is 401 saying what to send, not a bare 403;
    a user the hub refuses stays 403."""

    @wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.current_user is None:
            raise Unauthenticated() if self._unauthenticated() else web.HTTPError(403)
        return method(self, *args, **kwargs)

    # The mark jupyter_server looks for on every route's methods (as ws_authenticated sets).
    setattr(wrapper, "__allow_unauthenticated", False)
    return cast(MethodT, wrapper)


class RunScopeAuthorizer(Authorizer):
    """Authorizes a run-token request: its scope was checked when it was authenticated."""

    def __init__(self, resource: str) -> None:
        super().__init__()
        self._resource = resource

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:  # noqa: ARG002 - Authorizer's signature
        return resource == self._resource


class RunTokenAuth(TokenChallenge):
    """Mixin for JupyterHandler subclasses: accept a run token for its own run's routes, and
    an agent token where the handler allows one (`agent_token_methods`).

    Call `await authenticate_tokens()` first thing in `prepare`; when it returns False, go on
    with jupyter_server's own `prepare`.
    """

    #: Verbs a run token may use on this handler's route.
    run_token_methods: frozenset[str] = frozenset({"GET", "POST"})
    #: The run authenticated by a run token for this request, else None.
    run_token_run_id: str | None = None
    #: Verbs an agent token may use on this handler's route (none unless the handler says).
    agent_token_methods: frozenset[str] = frozenset()
    #: Whether an agent token is also taken as `?token=` here (the MCP route).
    agent_token_in_query: bool = False
    #: The agent token that authenticated this request, else None.
    agent_token: AgentToken | None = None
    #: jupyter_server's (declared there as None): the user tornado's logging reads.
    _jupyter_current_user: Any

    def authenticate_run_token(self: Any) -> bool:
        """True when the request carries a run token valid for this route (now authenticated).

        Raises 403 when it carries a run token for another run or route; False when it
        carries none (the caller then authenticates the usual way).
        """
        match = _AUTH_HEADER.match(self.request.headers.get("Authorization", ""))
        if not match:
            return False
        run_id = self.settings["agent_tools_runtime"].run_tokens.run_id_for(match.group(2).strip())
        if run_id is None:
            return False
        JupyterCallContext.set(JupyterCallContext.JUPYTER_HANDLER, self)
        in_scope = (self.path_kwargs.get("run_id") == run_id
                    and self.request.method in self.run_token_methods)
        if not in_scope or not self.check_host():
            # tornado's logging reads current_user; set it before refusing.
            self.current_user = self._jupyter_current_user = None
            raise web.HTTPError(403, "A run token is good only for its own run's routes.")
        self.run_token_run_id = run_id
        # A header token cannot ride along on a forged cross-site request: like the server
        # token, it needs no XSRF or origin check.
        self._token_authenticated = True
        self.current_user = self._jupyter_current_user = User(
            username=f"agent-run-{run_id}", name="agent worker", display_name="agent worker"
        )
        self.set_cors_headers()
        return True

    async def authenticate_agent_token(self: Any) -> bool:
        """True when the request carries a valid agent token allowed on this route (now
        authenticated as the token's agent); False when it carries none.

        Raises 401 (Unauthenticated) for an agent token that is wrong, expired or revoked,
        and 403 when the route, the verb or the run is not the token's to reach.
        """
        presented = self._presented_agent_token()
        tokens: AgentTokens | None = self.settings.get("agent_tools_tokens")
        if presented is None or tokens is None:
            return False
        JupyterCallContext.set(JupyterCallContext.JUPYTER_HANDLER, self)
        # tornado's logging reads current_user; set it before refusing.
        self.current_user = self._jupyter_current_user = None
        token = await tokens.verify(presented)
        if token is None:
            raise Unauthenticated()
        if self.request.method not in self.agent_token_methods or not self.check_host():
            raise ToolError(ErrorCode.PERMISSION_DENIED,
                            "An agent token reaches only an agent's own agent-tools routes "
                            f"(runs it opens, their calls, MCP); not {self.request.method} "
                            f"{self.request.path}. That is the user's to do, with their own "
                            "login or the server's token.")
        run_id = self.path_kwargs.get("run_id")
        if run_id is not None and run_id not in await tokens.runs_of(token.id):
            raise ToolError(ErrorCode.PERMISSION_DENIED,
                            f"Run {run_id} was not opened with this agent token; an agent token "
                            "reaches only the runs opened with it. Open one (POST "
                            "agent-tools/api/runs, or agent-tools/mcp).")
        self.agent_token = token
        # A header token cannot ride along on a forged cross-site request (nor can one in the
        # URL): no XSRF or origin check, as for the server's token.
        self._token_authenticated = True
        self.current_user = self._jupyter_current_user = User(
            username=f"agent-token-{token.id}", name=f"agent ({token.label})",
            display_name=f"agent ({token.label})")
        self.set_cors_headers()
        return True

    async def authenticate_tokens(self: Any) -> bool:
        """A run token's or an agent token's request, authenticated (see above); False when
        the request carries neither (jupyter_server's `prepare` then authenticates it)."""
        return bool(self.authenticate_run_token() or await self.authenticate_agent_token())

    def _presented_agent_token(self: Any) -> str | None:
        match = _AUTH_HEADER.match(self.request.headers.get("Authorization", ""))
        if match:
            presented = match.group(2).strip()
        elif self.agent_token_in_query:
            presented = self.get_query_argument("token", "")
        else:
            return None
        return presented if presented.startswith(PREFIX) else None

    def within_ceiling(self: Any, request: ModelT) -> ModelT:
        """`request` (a run's options: `RunRequest`) as an agent token may open it: the
        ceiling's options where it leaves them out; 403 naming the ceiling when it asks for
        more. Unchanged for any other request."""
        token: AgentToken | None = self.agent_token
        if token is None:
            return request
        given = dict(request)  # its fields (this module cannot import http's models)
        try:
            updates = token.ceiling.check_request(
                self.settings["agent_tools_runtime"].root_path, cwd=given["cwd"],
                surface=given["surface"], approvals=given["approvals"], space=given["space"],
                notebook=given["notebook"], kernel_id=given["kernel_id"])
        except CeilingExceeded as exc:
            raise ToolError(ErrorCode.PERMISSION_DENIED, str(exc)) from None
        return request.model_copy(update=updates)

    async def check_conversation(self: Any, conversation_id: str | None) -> None:
        """403 when an agent token names a conversation whose runs (open, or the last ended
        one a new run would continue) were not opened with it."""
        token: AgentToken | None = self.agent_token
        if token is None or not conversation_id:
            return
        runtime = self.settings["agent_tools_runtime"]
        owned = await self.settings["agent_tools_tokens"].runs_of(token.id)
        others = [run.id for run in runtime.runs.values()
                  if run.conversation_id == conversation_id and run.id not in owned]
        if not others and runtime.run_store is not None:
            found = await runtime.run_store.last_ended_in_conversation(conversation_id)
            if found is not None and found[0]["id"] not in owned:
                others.append(found[0]["id"])
        if others:
            raise ToolError(ErrorCode.PERMISSION_DENIED,
                            f"conversation_id {conversation_id[:200]!r} is a conversation of "
                            "runs not opened with this agent token; name another one.")

    def check_join(self: Any, described: dict[str, Any]) -> None:
        """403 when an agent token joins a run (its descriptor) above the token's ceiling."""
        token: AgentToken | None = self.agent_token
        if token is None:
            return
        try:
            token.ceiling.check_run(described, self.settings["agent_tools_runtime"].root_path)
        except CeilingExceeded as exc:
            raise ToolError(ErrorCode.PERMISSION_DENIED, str(exc)) from None

    async def opened_with_token(self: Any, run_id: str) -> None:
        """Remember that the request's agent token opened run `run_id` (it may reach it)."""
        if self.agent_token is not None:
            await self.settings["agent_tools_tokens"].record_run(self.agent_token.id, run_id)

    @property
    def authorizer(self: Any) -> Authorizer:
        if self.run_token_run_id is not None:
            return RunScopeAuthorizer(self.auth_resource)
        if self.agent_token is not None:  # the route and verb were checked at authentication
            return RunScopeAuthorizer(self.auth_resource)
        return super().authorizer  # type: ignore[misc]
