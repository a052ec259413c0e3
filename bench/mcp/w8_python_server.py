"""W8's Python peer: the official SDK's high-level server (MCPServer, FastMCP's successor)
with the same `add` tool as Actuator's (`crates/mcp/benches/w8.rs serve`), over stdio."""

import anyio

from mcp.server.mcpserver import MCPServer

server = MCPServer("w8-python")


@server.tool(description="Add two integers.")
def add(x: int, y: int) -> int:
    return x + y


anyio.run(server.run_stdio_async)
