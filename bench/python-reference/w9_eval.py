"""W9 - an evaluation of N samples (default 10 000) through Inspect's own ``eval``.

The same task as Actuator's ``crates/eval/benches/eval.rs``: each sample asks
"What is X + Y?"; a react agent on ``mockllm/model`` (a callable
``custom_outputs`` that calls ``add(X, Y)`` and then submits the tool's
result, with ``usage`` set so the mock does not count tokens itself) answers;
scorers ``match(numeric=True)`` and ``includes()``; 100 samples at once; the
``.eval`` log written to ./.logs.  Reports wall time, samples per second and
peak RSS (``ru_maxrss``), then reads the log back and checks every sample.

Run:  .venv/bin/python w9_eval.py --samples 1000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import time

import common  # noqa: F401
from common import emit, peak_rss_mib

from inspect_ai import Task, eval_async
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes, match
from inspect_ai.tool import Tool, tool


@tool
def add() -> Tool:
    async def execute(x: int, y: int) -> int:
        """Add two integers.

        Args:
          x: First addend.
          y: Second addend.
        """
        return x + y

    return execute


def script(input, tools, tool_choice, config) -> ModelOutput:
    question = next(m.text for m in input if isinstance(m, ChatMessageUser))
    results = [m for m in input if isinstance(m, ChatMessageTool) and m.function == "add"]
    if results:
        out = ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": results[-1].text},
                                        tool_call_id=f"submit_{len(input)}")
    else:
        x, y = (int(n) for n in re.findall(r"\d+", question)[:2])
        out = ModelOutput.for_tool_call("mockllm/model", "add", {"x": x, "y": y},
                                        tool_call_id=f"add_{len(input)}")
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out


async def main(samples: int) -> None:
    dataset = [Sample(input=f"What is {i} + {2 * i}?", target=str(3 * i), id=i)
               for i in range(1, samples + 1)]
    task = Task(dataset=dataset, solver=react(prompt="Use add, then submit.", tools=[add()]),
                scorer=[match(numeric=True), includes()])
    model = get_model("mockllm/model", custom_outputs=script)
    t0 = time.perf_counter()
    logs = await eval_async(task, model=model, max_samples=100, max_connections=100)
    wall = time.perf_counter() - t0
    peak = peak_rss_mib()
    log = logs[0]
    assert log.status == "success", log.error
    size = os.path.getsize(log.location)
    read = read_eval_log(log.location)
    assert len(read.samples) == samples, len(read.samples)
    assert all(s.scores["match"].value == "C" for s in read.samples)
    os.remove(log.location)
    n = "10 000" if samples == 10_000 else str(samples)
    emit("W9", f"eval {n} samples: wall", None, unit="s", median=wall, p90=wall, runs=1)
    emit("W9", f"eval {n} samples: samples per second", None, unit="samples/s",
         median=samples / wall, p90=samples / wall, runs=1)
    emit("W9", f"eval {n} samples: peak RSS (ru_maxrss)", None, unit="MiB", median=peak,
         p90=peak, runs=1)
    emit("W9", f"eval {n} samples: log size", None, unit="MiB", median=size / 1048576,
         p90=size / 1048576, runs=1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    asyncio.run(main(args.samples))
