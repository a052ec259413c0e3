"""W8: one `tools/call` round trip over stdio.

1. The official Python SDK's client calling `add(3, 4)` on Actuator's server (the release
   `mcp_server` example) and on the SDK's own MCPServer with the same tool.
2. Our client's cost per call against server-everything's `echo`, beside the Python SDK
   client's against the same server (the Rust side is `crates/mcp/examples/w8_client.rs`).

Run from the repository root after `scripts/setup-test-env` and
`cargo build --release -p actuator-mcp --example w8_client` and
`cargo build --release -p actuator --example mcp_server --features mcp`:

    target/test-env/venv-mcp/bin/python bench/mcp/w8.py [N]

Prints the medians (microseconds) and the ratios.
"""

import os
import statistics
import subprocess
import sys
import time

import anyio

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
PYTHON = sys.executable
EVERYTHING = os.path.join(
    TARGET, "test-env/npm-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


async def python_client(command: str, args: list[str], tool: str, arguments: dict, n: int) -> list[float]:
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):
                await session.call_tool(tool, arguments)
            samples = []
            for _ in range(n):
                started = time.perf_counter()
                await session.call_tool(tool, arguments)
                samples.append((time.perf_counter() - started) * 1e6)
    return samples


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    ours = os.path.join(TARGET, "release/examples/mcp_server")
    add = {"x": 3, "y": 4}
    ours_s = anyio.run(python_client, ours, [], "add", add, n)
    theirs_s = anyio.run(
        python_client, PYTHON, [os.path.join(ROOT, "bench/mcp/w8_python_server.py")], "add", add, n
    )
    echo = {"message": "hi"}
    py_echo = anyio.run(python_client, "node", [EVERYTHING, "stdio"], "echo", echo, n)
    rust = subprocess.run(
        [os.path.join(TARGET, "release/examples/w8_client"), str(n), "echo", '{"message": "hi"}',
         "node", EVERYTHING, "stdio"],
        check=True, capture_output=True, text=True,
    ).stdout
    rust_echo = float(rust.split("median_us=")[1].split()[0])
    print(f"W8 n={n} (medians, microseconds)")
    print(f"  Python SDK client -> Actuator server, add:   {median(ours_s):9.1f}")
    print(f"  Python SDK client -> Python MCPServer, add:  {median(theirs_s):9.1f}")
    print(f"  ratio (Python server / Actuator server):     {median(theirs_s) / median(ours_s):9.2f}x")
    print(f"  Python SDK client -> server-everything echo: {median(py_echo):9.1f}")
    print(f"  Actuator client  -> server-everything echo:  {rust_echo:9.1f}")
    print(f"  ratio (Python client / Actuator client):     {median(py_echo) / rust_echo:9.2f}x")


if __name__ == "__main__":
    main()
