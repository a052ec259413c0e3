"""An MCP server on the official Python SDK that speaks one protocol version only, as a
server released before a newer version does: it answers `initialize` with that version
whatever the client offers, does not know `server/discover`, and (over HTTP) refuses requests
whose MCP-Protocol-Version header names another version. Its tool `version` returns the
version the session negotiated and the header the request carried.

Usage: python pinned_server.py VERSION stdio
       python pinned_server.py VERSION http PORT
"""

import sys

import anyio

import mcp.server.runner as runner
import mcp.server.streamable_http_manager as http_manager
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

VERSION = sys.argv[1]
TRANSPORT = sys.argv[2]

# The SDK negotiates among the versions it knows; this server knows one.
runner.HANDSHAKE_PROTOCOL_VERSIONS = (VERSION,)
runner.LATEST_HANDSHAKE_VERSION = VERSION
http_manager.HANDSHAKE_PROTOCOL_VERSIONS = (VERSION,)


async def list_tools(ctx, params) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {}}
    return types.ListToolsResult(
        tools=[types.Tool(name="version", description="The negotiated protocol version.", input_schema=schema)]
    )


async def call_tool(ctx, params) -> types.CallToolResult:
    negotiated = getattr(ctx, "protocol_version", None)
    header = None
    request = getattr(ctx, "request", None)
    if request is not None and hasattr(request, "headers"):
        header = request.headers.get("mcp-protocol-version")
    text = f"negotiated={negotiated} header={header}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def server() -> Server:
    s = Server("pinned", on_list_tools=list_tools, on_call_tool=call_tool)
    # Released before server/discover existed.
    s._request_handlers.pop("server/discover", None)
    return s


async def main_stdio() -> None:
    s = server()
    async with stdio_server() as (read, write):
        await s.run(read, write, s.create_initialization_options())


if TRANSPORT == "stdio":
    anyio.run(main_stdio)
else:
    import uvicorn

    port = int(sys.argv[3])
    app = server().streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
