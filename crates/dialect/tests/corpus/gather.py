#!/usr/bin/env python3
"""Regenerates tools.jsonl.gz, the corpus of real-world tool definitions (see README.md).

Reads local git checkouts only (it never touches the network) and is not run by CI:

    gather.py --github-mcp-server DIR --mcp-validator DIR --gorilla DIR \
        --kubernetes-mcp-server DIR [--inspect-python PYTHON]

Each line of the output is {"source", "name", "description", "inputSchema"}; identical
definitions are kept once. The gzip header carries no timestamp, so the same inputs give the
same bytes.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# BFCL's own type names, as its OpenAI handler converts them to JSON Schema.
BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
# BFCL categories whose functions are Java or JavaScript signatures, not JSON Schema.
BFCL_SKIP = ("java", "javascript", "format_sensitivity")

INSPECT_DUMP = r"""
import json, inspect_ai.tool as T
from inspect_ai.tool._tool_def import ToolDef
out = []
for n in sorted(dir(T)):
    f = getattr(T, n)
    if n.startswith('_') or not callable(f) or n == 'create_tool_wrapper':
        continue
    try:
        tools = f()
    except Exception:
        continue
    for tool in tools if isinstance(tools, list) else [tools]:
        try:
            td = ToolDef(tool)
        except Exception:
            continue
        out.append({"name": td.name, "description": td.description,
                    "inputSchema": td.parameters.model_dump(exclude_none=True)})
print(json.dumps(out))
"""


def git(repo, *args):
    return subprocess.check_output(["git", "-C", repo, *args]).decode()


def head(repo):
    return git(repo, "rev-parse", "HEAD").strip()


def github_mcp_server(repo):
    folder = "pkg/github/__toolsnaps__"
    for path in git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split():
        if path.endswith(".snap"):
            tool = json.loads(git(repo, "show", "HEAD:" + path))
            yield "github/github-mcp-server", tool


def mcp_validator(repo):
    folder = "tests/fixtures"
    for path in git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split():
        name = os.path.basename(path)
        if not (name.startswith("official-") or name.startswith("thirdparty-")):
            continue
        fixture = json.loads(git(repo, "show", "HEAD:" + path))
        server = name[: -len(".json")]
        for entry in fixture["tools"]:
            yield "mcp-validator/" + server, entry["tool"]["source"]["raw"]


def kubernetes_mcp_server(repo):
    folder = "pkg/mcp/testdata"
    for path in git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split():
        name = os.path.basename(path)
        if not (name.startswith("toolsets-") and "-tools" in name and name.endswith(".json")):
            continue
        for tool in json.loads(git(repo, "show", "HEAD:" + path)):
            yield "containers/kubernetes-mcp-server/" + name[: -len(".json")], tool


def bfcl_schema(schema):
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                if value in ("any", ""):
                    continue
                value = BFCL_TYPES.get(value, value)
            out[key] = bfcl_schema(value)
        return out
    if isinstance(schema, list):
        return [bfcl_schema(v) for v in schema]
    return schema


def gorilla(repo):
    folder = "berkeley-function-call-leaderboard/bfcl_eval/data"
    for path in git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split():
        name = os.path.basename(path)
        if not name.startswith("BFCL_") or any(s in name for s in BFCL_SKIP):
            continue
        category = name[: -len(".json")]
        for line in git(repo, "show", "HEAD:" + path).splitlines():
            if not line.strip():
                continue
            for fn in json.loads(line).get("function") or []:
                if not isinstance(fn, dict):
                    continue
                yield "bfcl/" + category, {
                    "name": fn["name"],
                    "description": fn.get("description", ""),
                    "inputSchema": bfcl_schema(fn.get("parameters", {})),
                }


def gorilla_multi_turn(repo):
    """BFCL's multi-turn API docs: one function per line."""
    folder = "berkeley-function-call-leaderboard/bfcl_eval/data/multi_turn_func_doc"
    for path in git(repo, "ls-tree", "--name-only", "HEAD", folder + "/").split():
        api = os.path.basename(path)[: -len(".json")]
        for line in git(repo, "show", "HEAD:" + path).splitlines():
            if line.strip():
                fn = json.loads(line)
                yield "bfcl/multi_turn_func_doc/" + api, {
                    "name": fn["name"],
                    "description": fn.get("description", ""),
                    "inputSchema": bfcl_schema(fn.get("parameters", {})),
                }


def inspect_ai(python):
    for tool in json.loads(subprocess.check_output([python, "-c", INSPECT_DUMP])):
        yield "inspect_ai", tool


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--github-mcp-server", required=True)
    parser.add_argument("--mcp-validator", required=True)
    parser.add_argument("--gorilla", required=True)
    parser.add_argument("--kubernetes-mcp-server", required=True)
    parser.add_argument("--inspect-python")
    args = parser.parse_args()

    sources = [
        github_mcp_server(args.github_mcp_server),
        mcp_validator(args.mcp_validator),
        kubernetes_mcp_server(args.kubernetes_mcp_server),
        gorilla(args.gorilla),
        gorilla_multi_turn(args.gorilla),
    ]
    if args.inspect_python:
        sources.append(inspect_ai(args.inspect_python))
    seen = set()
    lines = []
    for source in sources:
        for origin, tool in source:
            entry = {
                "name": tool["name"],
                "description": tool.get("description") or "",
                "inputSchema": tool.get("inputSchema") or {},
            }
            key = json.dumps(entry, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            lines.append(json.dumps({"source": origin, **entry}, ensure_ascii=False))
    out = os.path.join(HERE, "tools.jsonl.gz")
    with open(out, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            gz.write(("\n".join(lines) + "\n").encode())
    for name, repo in [
        ("github-mcp-server", args.github_mcp_server),
        ("mcp-validator", args.mcp_validator),
        ("gorilla", args.gorilla),
        ("kubernetes-mcp-server", args.kubernetes_mcp_server),
    ]:
        print(f"{name}: {head(repo)}", file=sys.stderr)
    print(f"{len(lines)} tools written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
