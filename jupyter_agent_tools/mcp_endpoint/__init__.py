"""agent-tools/mcp: MCP over streamable HTTP on the Jupyter server's own port, one run per session.

`McpEndpoint` keeps the sessions (each an `McpSession` bound to one run), `handlers` serves
them through tornado, `asgi` adapts the SDK's ASGI transport to tornado.
"""

from .endpoint import McpEndpoint
from .session import McpSession

__all__ = ["McpEndpoint", "McpSession"]
