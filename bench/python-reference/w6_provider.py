"""W6 - one react turn through Inspect's ``openai`` provider against a canned server.

The server is the Rust bench's (``provider --serve`` of ``crates/providers/benches``): it
answers every ``POST /v1/chat/completions`` at once with the same completion (one call of
``add`` with x=3, y=4) and records its own handler time per request, served back at
``GET /stats`` (``POST /reset`` clears it, ``GET /last`` returns the last request body).
``cargo xtask bench`` starts it and passes its address in ``W6_BASE_URL``, so the Rust and
the Python client measure against the same server process; without it this script has
nothing to measure against and says so.

One turn is what Inspect's react loop does per turn, outside an eval (Inspect's ``react``
needs a running sample): ``Model.generate`` on a 100-message conversation (built by the same
rule as ``crates/providers/benches/w6/conversation.rs``) with the tools ``add`` and ``search``
of ``tools_fixture.py``, the assistant message appended, ``execute_tools`` (the ``add`` call),
both messages dropped again so every turn sends the same 100 messages. A fresh
``Transcript`` per turn (the Rust side a fresh ``EventLog``).

Reported (medians after a warm-up): the turn's total, its client overhead (total minus the
server handler's time for that turn's request, paired by order), generate and execute_tools
alone, the server's handler time, the request body size, and two floors with the same
request body (Inspect's own, from ``/last``): the openai SDK's
``chat.completions.create`` and a raw ``httpx`` POST.

Run:  W6_BASE_URL=http://127.0.0.1:PORT .venv/bin/python w6_provider.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import common  # noqa: F401
from common import emit, n

import httpx
from inspect_ai.log._transcript import Transcript, init_transcript
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    execute_tools,
    get_model,
)
from inspect_ai.tool import ToolCall

from tools_fixture import add, search

MODEL = "gpt-4.1-mini"
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]

TOTAL = "turn (generate + execute_tools), 100 messages: total"
OVERHEAD = "turn, 100 messages: client overhead (total - server handler time)"
GENERATE = "turn, 100 messages: generate (request build, HTTP, parse, event)"
EXECUTE = "turn, 100 messages: execute_tools (1 call add)"
SERVER = "server handler time per request"
FLOOR = "raw POST of the same body: client overhead (HTTP client floor)"
SDK = "openai SDK chat.completions.create, same body: client overhead"
BODY = "request body size"


def text(seed: int, count: int) -> str:
    """``count`` words of filler starting at a place fixed by ``seed`` (as the Rust side)."""
    return " ".join(WORDS[(seed * 7 + k) % len(WORDS)] for k in range(count))


def conversation() -> list:
    """Exactly 100 messages: system, user, then 49 assistant tool calls with their results."""
    messages: list = [
        ChatMessageSystem(content="You are a careful assistant working on a data task. Use the "
                          "tools to compute and look things up; answer briefly. " + text(0, 120)),
        ChatMessageUser(content="Work through the records below and total them.\n" + text(1, 80)),
    ]
    for i in range(49):
        call_id = f"call_{i}"
        if i % 2 == 0:
            function, arguments, result = "add", {"x": i, "y": i + 1}, str(2 * i + 1)
        else:
            function = "search"
            arguments = {"query": text(i, 4), "limit": 8}
            result = "\n".join(f"hit {k}: {text(i + k, 20)}" for k in range(8))
        messages.append(ChatMessageAssistant(
            content=f"Step {i}: {text(i + 2, 30)}",
            tool_calls=[ToolCall(id=call_id, function=function, arguments=arguments)]))
        messages.append(ChatMessageTool(content=result, tool_call_id=call_id, function=function))
    assert len(messages) == 100
    return messages


class Server:
    """The canned server's control endpoints."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx.AsyncClient()

    async def reset(self) -> None:
        (await self.http.post(f"{self.base}/reset")).raise_for_status()

    async def stats(self, turns: int) -> dict:
        r = await self.http.get(f"{self.base}/stats")
        r.raise_for_status()
        stats = r.json()
        assert len(stats["handler_ns"]) == turns, (len(stats["handler_ns"]), turns)
        return stats

    async def last(self) -> bytes:
        r = await self.http.get(f"{self.base}/last")
        r.raise_for_status()
        return r.content


def minus_handler(times: list[float], stats: dict) -> list[float]:
    return [t - h * 1e-9 for t, h in zip(times, stats["handler_ns"])]


async def measure(server: Server, turns: int, once) -> tuple[list, dict]:
    """A warm-up of turns/10, then ``turns`` timed calls of ``once`` and the server's records."""
    for _ in range(max(turns // 10, 5)):
        await once()
    await server.reset()
    times = [await once() for _ in range(turns)]
    return times, await server.stats(turns)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.environ.get("W6_BASE_URL", ""))
    ap.add_argument("--turns", type=int, default=n(1000, 50))
    args = ap.parse_args()
    if not args.server:
        print("w6_provider.py: no server (set W6_BASE_URL, as `cargo xtask bench` does); "
              "nothing measured", file=sys.stderr)
        return
    base = args.server.rstrip("/")
    server = Server(base)
    model = get_model(f"openai/{MODEL}", base_url=f"{base}/v1", api_key="sk-w6-bench")
    tools = [add(), search()]
    messages = conversation()

    async def turn() -> tuple[float, float, float]:
        init_transcript(Transcript())
        t0 = time.perf_counter()
        output = await model.generate(messages, tools=tools)
        messages.append(output.message)
        t1 = time.perf_counter()
        result = await execute_tools(messages, tools)
        t2 = time.perf_counter()
        assert len(result.messages) == 1 and result.messages[0].text == "7", result.messages
        messages.pop()
        return t2 - t0, t1 - t0, t2 - t1

    times, stats = await measure(server, args.turns, turn)
    emit("W6", TOTAL, [t[0] for t in times], unit="us")
    emit("W6", OVERHEAD, minus_handler([t[0] for t in times], stats), unit="us")
    emit("W6", GENERATE, [t[1] for t in times], unit="us")
    emit("W6", EXECUTE, [t[2] for t in times], unit="us")
    emit("W6", SERVER, [h * 1e-9 for h in stats["handler_ns"]], unit="us")
    sizes = sorted(stats["body_bytes"])
    size = sizes[len(sizes) // 2] / 1024.0
    emit("W6", BODY, None, median=size, p90=size, runs=len(sizes), unit="KiB")

    body = await server.last()
    request = json.loads(body)
    client = model.api.client  # the AsyncOpenAI client Inspect's provider uses

    async def sdk() -> float:
        t0 = time.perf_counter()
        completion = await client.chat.completions.create(**request)
        t = time.perf_counter() - t0
        assert completion.choices[0].message.tool_calls[0].function.name == "add"
        return t

    times, stats = await measure(server, args.turns, sdk)
    emit("W6", SDK, minus_handler(times, stats), unit="us")

    raw = httpx.AsyncClient()
    url = f"{base}/v1/chat/completions"
    headers = {"content-type": "application/json", "authorization": "Bearer sk-w6-bench"}

    async def post() -> float:
        t0 = time.perf_counter()
        r = await raw.post(url, content=body, headers=headers)
        answer = r.content
        t = time.perf_counter() - t0
        assert r.status_code == 200 and len(answer) > 100
        return t

    times, stats = await measure(server, args.turns, post)
    emit("W6", FLOOR, minus_handler(times, stats), unit="us")


if __name__ == "__main__":
    asyncio.run(main())
