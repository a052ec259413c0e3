"""The reference's scorers on a list of cases, for comparison with ours.

Reads [{"scorer": ..., "args": {...}, "completion": ..., "target": [...]}, ...] on stdin and
prints [{"value": ..., "answer": ...}, ...] as the reference's scorers give them.
"""

import asyncio
import json
import sys

from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Target, exact, f1, includes, match, pattern
from inspect_ai.solver import TaskState

SCORERS = {"match": match, "includes": includes, "pattern": pattern, "exact": exact, "f1": f1}


async def score(case):
    state = TaskState(
        model="mockllm/model",
        sample_id=1,
        epoch=1,
        input="question",
        messages=[],
        output=ModelOutput.from_content("mockllm/model", case["completion"]),
    )
    scorer = SCORERS[case["scorer"]](**case["args"])
    result = await scorer(state, Target(case["target"]))
    return {"value": result.value, "answer": result.answer}


async def main():
    cases = json.load(sys.stdin)
    json.dump([await score(c) for c in cases], sys.stdout)


asyncio.run(main())
