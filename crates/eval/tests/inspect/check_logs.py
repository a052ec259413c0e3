"""Reads logs with the reference's own reader: for each, its status and its samples' keys.

Usage: check_logs.py LOG... Fails (exit 1) when the reference cannot read one. Prints a JSON
list of {"path", "status", "error", "samples": [[id, epoch, error], ...]}, one per log.
"""

import json
import sys

from inspect_ai.log import read_eval_log


def main(paths: list[str]) -> None:
    out = []
    for path in paths:
        header = read_eval_log(path, header_only=True)
        log = read_eval_log(path)
        out.append(
            {
                "path": path,
                "status": header.status,
                "error": header.error.message if header.error else None,
                "samples": [
                    [s.id, s.epoch, s.error.message if s.error else None]
                    for s in (log.samples or [])
                ],
            }
        )
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
