"""The official MCP Python SDK starting an MCP server as a command over stdio (as Claude
Desktop or an IDE would), listing its tools and calling them; writes what it saw as JSON.

Usage: python sdk_stdio_client.py OUT.json COMMAND [ARGS...]
"""

import json
import sys

import anyio

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    out, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            add = await session.call_tool("add", {"x": 3, "y": 4})
            bad = await session.call_tool("multiply", {"x": "seven", "y": 5})
            seen = {
                "tools": sorted(t.name for t in listed.tools),
                "add": [c.text for c in add.content],
                "bad": {"is_error": bad.is_error, "text": [c.text for c in bad.content]},
            }
    with open(out, "w") as f:
        json.dump(seen, f)


anyio.run(main)
