"""The official MCP Python SDK as a client of an Actuator server: lists the tools, calls
one, gets a validation error, cancels a slow call, and writes what it saw as JSON.

Usage:
  python sdk_client.py OUT.json stdio          # the server is on this process's stdin/stdout
  python sdk_client.py OUT.json http URL [TOKEN]
"""

import json
import os
import sys

import anyio

from mcp import ClientSession


def step(name: str) -> None:
    print(f"sdk_client: {name}", file=sys.stderr, flush=True)


async def scenario(session: ClientSession) -> dict:
    step("initialize")
    await session.initialize()
    step("list_tools")
    seen: dict = {}
    listed = await session.list_tools()
    seen["tools"] = {t.name: t.input_schema for t in listed.tools}
    seen["output_schemas"] = {t.name: t.output_schema for t in listed.tools if t.output_schema is not None}
    step("call add")
    add = await session.call_tool("add", {"x": 3, "y": 4})
    seen["add"] = {"is_error": add.is_error, "text": [c.text for c in add.content]}
    bad = await session.call_tool("add", {"x": "seven", "y": 4})
    seen["bad"] = {"is_error": bad.is_error, "text": [c.text for c in bad.content]}
    point = await session.call_tool("point", {"x": 1})
    seen["point"] = {"text": [c.text for c in point.content], "structured": point.structured_content}
    step("call count")
    reports: list = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append([progress, total, message])

    counted = await session.call_tool("count", {}, progress_callback=on_progress)
    seen["count"] = {"text": [c.text for c in counted.content], "progress": reports}
    step("call slow")
    # Cancel a slow call: abandoning the request sends notifications/cancelled.
    with anyio.move_on_after(0.7):
        await session.call_tool("slow", {})
        seen["slow"] = "finished"
    seen.setdefault("slow", "abandoned")
    step("after")
    # The server is still fine afterwards.
    after = await session.call_tool("add", {"x": 1, "y": 1})
    seen["after"] = [c.text for c in after.content]
    step("done")
    return seen


async def main() -> None:
    out, mode = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        # Speak the stdio transport over our own stdin/stdout (the test serves us there).
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            async with ClientSession(read, write) as session:
                seen = await scenario(session)
                with open(out, "w") as f:
                    json.dump(seen, f)
                # stdio_server (a server's helper) waits for stdin to close on exit, and the
                # server on the other end waits for us: we are done, so leave now.
                os._exit(0)
    else:
        import httpx2 as httpx
        from mcp.client.streamable_http import streamable_http_client

        url = sys.argv[3]
        headers = {"Authorization": f"Bearer {sys.argv[4]}"} if len(sys.argv) > 4 else {}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    seen = await scenario(session)
    with open(out, "w") as f:
        json.dump(seen, f)


anyio.run(main)
