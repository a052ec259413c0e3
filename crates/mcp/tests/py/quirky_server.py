"""An MCP server on the official Python SDK (low-level API) with the behaviours the client
tests need and the reference servers lack: a schema our validator cannot compile, a schema
with top-level keywords of its own ($schema, title) to pass through, a tool that
adds a tool and sends tools/list_changed, a tool that kills the server, and a slow tool that
writes a marker file when it is cancelled.

Usage: python quirky_server.py MARKER_DIR
"""

import os
import sys

import anyio

import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

MARKER_DIR = sys.argv[1]
extra_tools: list[str] = []


def tool(name: str, description: str, schema: dict) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema)


def text(t: str, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t)], is_error=is_error)


async def list_tools(ctx, params) -> types.ListToolsResult:
    tools = [
        tool(
            "bad_pattern",
            "Echoes q; its schema has a regex our validator refuses.",
            {"type": "object", "properties": {"q": {"type": "string", "pattern": "(?<!x"}}, "required": ["q"]},
        ),
        tool(
            "dated",
            "Echoes q; its schema names its dialect and title and leaves extra properties open.",
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "title": "Dated",
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
        ),
        tool("grow", "Adds a tool and says the list changed.", {"type": "object", "properties": {}}),
        tool("crash", "Exits the server at once.", {"type": "object", "properties": {}}),
        tool("slow", "Sleeps for a minute.", {"type": "object", "properties": {}}),
        tool("fail", "Reports an error.", {"type": "object", "properties": {}}),
    ]
    tools += [tool(n, "Added at run time.", {"type": "object", "properties": {}}) for n in extra_tools]
    return types.ListToolsResult(tools=tools)


async def call_tool(ctx, params) -> types.CallToolResult:
    name = params.name
    args = params.arguments or {}
    if name == "dated":
        return text(f"q={args.get('q')!r} extra={sorted(k for k in args if k != 'q')}")
    if name == "bad_pattern":
        return text(f"q={args.get('q')!r}")
    if name == "grow":
        extra_tools.append(f"added_{len(extra_tools) + 1}")
        await ctx.session.send_tool_list_changed()
        return text("grown")
    if name == "crash":
        os._exit(3)
    if name == "slow":
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            with open(os.path.join(MARKER_DIR, "cancelled"), "w") as f:
                f.write("cancelled")
            raise
        return text("slept")
    if name == "fail":
        return text("the disk is full", is_error=True)
    if name in extra_tools:
        return text(f"{name} ran")
    return text(f"Unknown tool: {name}", is_error=True)


async def main() -> None:
    with open(os.path.join(MARKER_DIR, "pid"), "w") as f:
        f.write(str(os.getpid()))
    server = Server("quirky", on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


anyio.run(main)
