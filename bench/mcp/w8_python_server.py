"""W8's Python peer: the official SDK's high-level server (MCPServer, FastMCP's successor)
with the same `add` tool, `bench://note` resource and sampling `ask` tool as Actuator's
(`crates/mcp/benches/w8.rs serve`), over stdio."""

import anyio

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("w8-python")


@server.tool(description="Add two integers.")
def add(x: int, y: int) -> int:
    return x + y


@server.resource("bench://note", name="note", mime_type="text/plain")
def note() -> str:
    return "A short note."


@server.tool(description="Asks the client's model.")
async def ask(ctx: Context) -> str:
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="Say hi."))],
        max_tokens=10,
    )
    return result.content.text


anyio.run(server.run_stdio_async)
