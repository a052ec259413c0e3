"""W7 - the built-in bash tool end to end in Inspect's ``local`` sandbox.

``local`` is a plain subprocess in a temporary directory, no confinement at all: Actuator's
``LocalSandbox`` (bubblewrap) is measured against it. HOME is set to a fresh empty directory
first (as LocalSandbox does for its commands), so the machine's login scripts do not count.

Cases:
  one call     execute_tools with one ``bash("echo hi")`` call (executor + spawn + output)
  100 parallel one assistant message with 100 ``bash("echo hi")`` calls: wall time, and the
               peak number of descendant processes (sampled from /proc every 1 ms)

Run:  .venv/bin/python w7_sandbox.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
import time

import common  # noqa: F401
from common import emit, n

from inspect_ai.log._transcript import Transcript, init_transcript
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, execute_tools
from inspect_ai.tool import ToolCall, bash
from inspect_ai.util._sandbox.context import (
    sandbox_default_context_var,
    sandbox_environments_context_var,
)
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment


def batch(count: int) -> list:
    calls = [
        ToolCall(id=f"call_{i}", function="bash", arguments={"command": "echo hi"})
        for i in range(count)
    ]
    return [ChatMessageUser(content="go"), ChatMessageAssistant(content="", tool_calls=calls)]


def descendants(me: int) -> int:
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            parent[int(name)] = int(rest[1])
        except (OSError, IndexError, ValueError):
            continue
    count = 0
    for pid in parent:
        p = pid
        for _ in range(64):
            pp = parent.get(p)
            if pp == me:
                count += 1
                break
            if pp is None or pp <= 1:
                break
            p = pp
    return count


async def main() -> None:
    # A fresh, empty HOME, as Actuator's LocalSandbox gives its commands: otherwise
    # `bash --login` runs this machine's own login scripts, which can dominate the figure.
    home = tempfile.mkdtemp(prefix="w7-home-")
    os.environ["HOME"] = home
    envs = await LocalSandboxEnvironment.sample_init("w7", None, {})
    sandbox_environments_context_var.set(envs)
    sandbox_default_context_var.set("default")
    tool = bash()

    one = batch(1)
    init_transcript(Transcript())
    res = await execute_tools(one, [tool])
    assert res.messages[0].text == "hi\n", res.messages[0].text
    walls = []
    for _ in range(n(100)):
        init_transcript(Transcript())
        t0 = time.perf_counter()
        await execute_tools(one, [tool])
        walls.append(time.perf_counter() - t0)
    emit("W7", "bash('echo hi') end to end, local sandbox", walls, unit="ms")

    hundred = batch(100)
    init_transcript(Transcript())
    res = await execute_tools(hundred, [tool])
    bad = [m.text for m in res.messages if m.text != "hi\n"]
    assert not bad, bad[:3]
    walls, peaks = [], []
    for _ in range(n(10)):
        done = threading.Event()
        peak = [0]

        def sample() -> None:
            me = os.getpid()
            while not done.is_set():
                peak[0] = max(peak[0], descendants(me))
                time.sleep(0.001)

        sampler = threading.Thread(target=sample)
        sampler.start()
        init_transcript(Transcript())
        t0 = time.perf_counter()
        await execute_tools(hundred, [tool])
        walls.append(time.perf_counter() - t0)
        done.set()
        sampler.join()
        peaks.append(peak[0])
    emit("W7", "100 parallel bash calls: wall, local sandbox", walls, unit="ms")
    peaks.sort()
    emit("W7", "100 parallel bash calls: peak processes, local sandbox", None, unit="count",
         median=peaks[len(peaks) // 2], p90=peaks[int(len(peaks) * 0.9) - 1 if len(peaks) > 1 else 0],
         runs=len(peaks))
    await LocalSandboxEnvironment.sample_cleanup("w7", None, envs, interrupted=False)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
