"""An MCP server on the official Python SDK whose tools ask the client: `ask_model`
(sampling/createMessage), `ask_user` (elicitation/create with defaults the client fills in)
and `roots` (roots/list). Serves over stdio.

Usage: python asking_server.py
"""

import json

from pydantic import BaseModel, Field

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("asking")


class Deploy(BaseModel):
    branch: str = Field(default="main", description="The branch")
    replicas: int = Field(default=2, description="How many replicas")
    confirm: bool = Field(description="Go ahead?")


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Asks the client's model."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=30,
        system_prompt="Answer briefly.",
    )
    content = result.content
    text = content.text if hasattr(content, "text") else str(content)
    return f"{result.model}: {text}"


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Asks the client's user where to deploy."""
    result = await ctx.elicit("Deploy where?", Deploy)
    data = result.data.model_dump() if getattr(result, "data", None) is not None else None
    return json.dumps({"action": result.action, "data": data})


@server.tool()
async def roots(ctx: Context) -> str:
    """Lists the client's roots."""
    listed = await ctx.session.list_roots()
    return json.dumps([[str(r.uri), r.name] for r in listed.roots])


if __name__ == "__main__":
    server.run("stdio")
