"""W8, the Python SDK's side: one `tools/call` round trip over stdio, timed by the official
MCP Python SDK's client.

1. `add(3, 4)` on Actuator's server and on the SDK's own MCPServer (FastMCP's successor,
   `w8_python_server.py`) with the same tool.
2. `echo` on server-everything, the figure Actuator's client is set beside (its side is
   `crates/mcp/benches/w8.rs client`).

`cargo xtask bench --only w8` runs it. By hand, from the repository root after
`scripts/setup-test-env` and `cargo bench -p actuator-mcp --bench w8 --no-run`:

    target/test-env/venv-mcp/bin/python bench/mcp/w8.py N EVERYTHING_JS ACTUATOR_SERVER [ARGS...]

where ACTUATOR_SERVER is the bench binary with `serve`. Prints one `RESULT {json}` line per
case (median, p10, p90 in microseconds; 20 warm-up calls, then N timed).
"""

import json
import os
import statistics
import sys
import time

import anyio

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))


async def python_client(command: str, args: list[str], tool: str, arguments: dict, n: int) -> list[float]:
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool(tool, arguments)
            if first.is_error:
                raise SystemExit(f"{command} {tool}: {first.content}")
            for _ in range(19):
                await session.call_tool(tool, arguments)
            samples = []
            for _ in range(n):
                started = time.perf_counter()
                await session.call_tool(tool, arguments)
                samples.append((time.perf_counter() - started) * 1e6)
    return samples


def result(case: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    at = lambda q: ordered[round((len(ordered) - 1) * q)]
    row = {"workload": "W8", "case": case, "median": statistics.median(samples),
           "p10": at(0.1), "p90": at(0.9), "runs": len(samples), "unit": "us"}
    print("RESULT " + json.dumps(row), flush=True)


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    n, everything, ours = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    add = {"x": 3, "y": 4}
    result("python client -> actuator server, add",
           anyio.run(python_client, ours[0], ours[1:], "add", add, n))
    result("python client -> python MCPServer, add",
           anyio.run(python_client, sys.executable, [os.path.join(HERE, "w8_python_server.py")],
                     "add", add, n))
    result("python client -> server-everything echo",
           anyio.run(python_client, "node", [everything, "stdio"], "echo", {"message": "hi"}, n))


if __name__ == "__main__":
    main()
