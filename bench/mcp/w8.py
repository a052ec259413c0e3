"""W8, the Python SDK's side: one `tools/call` round trip over stdio, timed by the official
MCP Python SDK's client.

1. `add(3, 4)` on Actuator's server and on the SDK's own MCPServer (FastMCP's successor,
   `w8_python_server.py`) with the same tool; then, on both, a `resources/read` of
   `bench://note`, and a sampling round trip: the tool `ask` asks the client's model (here a
   scripted answer from the client's sampling callback) and returns its text.
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

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))


async def scripted_model(context, params: types.CreateMessageRequestParams):
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi"), model="scripted",
        stop_reason="endTurn",
    )


async def timed(session: ClientSession, op, n: int) -> list[float]:
    for _ in range(20):
        await op(session)
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await op(session)
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


def call(tool: str, arguments: dict):
    async def op(session: ClientSession) -> None:
        result = await session.call_tool(tool, arguments)
        if result.is_error:
            raise SystemExit(f"{tool}: {result.content}")
    return op


async def read_note(session: ClientSession) -> None:
    read = await session.read_resource("bench://note")
    if read.contents[0].text != "A short note.":
        raise SystemExit(f"bench://note: {read.contents}")


async def python_client(command: str, args: list[str], ops: list, n: int) -> list[list[float]]:
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, sampling_callback=scripted_model) as session:
            await session.initialize()
            return [await timed(session, op, n) for op in ops]


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
    ops = [call("add", {"x": 3, "y": 4}), read_note, call("ask", {})]
    names = ["add", "resources/read", "sampling"]
    for server, command, args in [
        ("actuator server", ours[0], ours[1:]),
        ("python MCPServer", sys.executable, [os.path.join(HERE, "w8_python_server.py")]),
    ]:
        for name, samples in zip(names, anyio.run(python_client, command, args, ops, n)):
            result(f"python client -> {server}, {name}", samples)
    (echo,) = anyio.run(python_client, "node", [everything, "stdio"], [call("echo", {"message": "hi"})], n)
    result("python client -> server-everything echo", echo)


if __name__ == "__main__":
    main()
