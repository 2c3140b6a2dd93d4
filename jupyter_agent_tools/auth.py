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
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_server.auth import Authorizer, User
from jupyter_server.base.call_context import CallContext as JupyterCallContext
from tornado import web

# The same shape jupyter_server's IdentityProvider accepts for its own token.
_AUTH_HEADER = re.compile(r"(token|bearer)\s+(.+)", re.IGNORECASE)


class RunScopeAuthorizer(Authorizer):
    """Authorizes a run-token request: its scope was checked when it was authenticated."""

    def __init__(self, resource: str) -> None:
        super().__init__()
        self._resource = resource

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:  # noqa: ARG002 - Authorizer's signature
        return resource == self._resource


class RunTokenAuth:
    """Mixin for JupyterHandler subclasses: accept a run token for its own run's routes.

    Call `authenticate_run_token()` first thing in `prepare`; when it returns False, go on
    with jupyter_server's own `prepare`.
    """

    #: Verbs a run token may use on this handler's route.
    run_token_methods: frozenset[str] = frozenset({"GET", "POST"})
    #: The run authenticated by a run token for this request, else None.
    run_token_run_id: str | None = None
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

    @property
    def authorizer(self: Any) -> Authorizer:
        if self.run_token_run_id is not None:
            return RunScopeAuthorizer(self.auth_resource)
        return super().authorizer  # type: ignore[misc]
