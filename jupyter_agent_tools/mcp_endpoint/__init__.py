"""agent-tools/mcp: MCP over streamable HTTP on the Jupyter server's own port, a run per
conversation.

`McpEndpoint` keeps the sessions (each an `McpSession` of an `McpConversation`, whose run it
makes at the first tool call and shares among the sessions naming its conversation_id),
`handlers` serves them through tornado, `asgi` adapts the SDK's ASGI transport to tornado.
"""

from .endpoint import McpEndpoint
from .session import McpSession

__all__ = ["McpEndpoint", "McpSession"]
