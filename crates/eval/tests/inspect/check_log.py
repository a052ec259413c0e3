"""Reads a log with the reference's own reader and prints what it read, as JSON.

Usage: check_log.py LOG. Fails (exit 1) when the reference cannot read the log, header only
or whole. Prints {"header": ..., "samples": [...]} with each sample's messages, scores and
events as the reference's pydantic models dump them (fields left at None dropped).
"""

import json
import sys

from inspect_ai.log import read_eval_log


def dump(model):
    return model.model_dump(mode="json", exclude_none=True)


def main(path: str) -> None:
    header = read_eval_log(path, header_only=True)
    log = read_eval_log(path)
    out = {
        "header": {
            "status": header.status,
            "task": header.eval.task,
            "model": header.eval.model,
            "dataset_samples": header.eval.dataset.samples,
            "results": dump(header.results) if header.results else None,
            "stats": dump(header.stats),
            "error": header.error.message if header.error else None,
        },
        "samples": [
            {
                "id": s.id,
                "epoch": s.epoch,
                "input": s.input if isinstance(s.input, str) else [dump(m) for m in s.input],
                "target": s.target,
                "messages": [dump(m) for m in s.messages],
                "output": dump(s.output),
                "scores": {k: dump(v) for k, v in (s.scores or {}).items()},
                "events": [dump(e) for e in s.events],
                "limit": dump(s.limit) if s.limit else None,
                "error": s.error.message if s.error else None,
                "traceback": s.error.traceback if s.error else None,
                "model_usage": {k: dump(v) for k, v in s.model_usage.items()},
            }
            for s in (log.samples or [])
        ],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
