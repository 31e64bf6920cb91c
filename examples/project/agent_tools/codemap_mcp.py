#!/usr/bin/env python3
"""codemap: a small MCP server over stdio (Python, stdlib only).

Newline-delimited JSON-RPC 2.0 on stdin/stdout, as MCP's stdio transport
says; logs go to stderr. Two tools:

  python_outline {path}   the classes and functions of Python files under
                          path, with their line numbers
  line_counts {path?}     lines per file extension under path

It reads the project directly, from its working directory: under toolvfs it
runs as an MCP server, in the OS sandbox, seeing only what the policy of the
tool entry that uses it allows (examples/project/toolvfs.toml).
"""

import ast
import json
import os
import sys

PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"]

TOOLS = [
    {
        "name": "python_outline",
        "description": "The classes and functions of the Python files under a path, with line numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A file or directory of the project"}},
            "required": ["path"],
        },
    },
    {
        "name": "line_counts",
        "description": "How many files and lines each file extension has under a path",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A directory of the project (default: all)"}},
        },
    },
]


def files_under(path):
    if os.path.isfile(path):
        yield path
        return
    def refuse(error):  # e.g. the sandbox keeps the directory out of reach
        raise ToolError(f"cannot read {error.filename}: {error.strerror}")

    for directory, subdirectories, names in os.walk(path, onerror=refuse):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in sorted(names):
            yield os.path.join(directory, name)


def python_outline(arguments):
    path = arguments["path"]
    if not os.path.exists(path):
        raise ToolError(f"{path}: no such file or directory")
    lines = []
    for file in files_under(path):
        if not file.endswith(".py"):
            continue
        try:
            with open(file, encoding="utf-8") as source:
                tree = ast.parse(source.read(), file)
        except (OSError, SyntaxError, UnicodeDecodeError) as error:
            lines.append(f"{file}: cannot read: {error}")
            continue
        lines.append(file)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                lines.append(f"  {node.lineno:4}  class {node.name}")
                for member in node.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        lines.append(f"  {member.lineno:4}    def {member.name}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines.append(f"  {node.lineno:4}  def {node.name}")
    return "\n".join(lines) if lines else f"no Python files under {path}"


def line_counts(arguments):
    path = arguments.get("path") or "."
    if not os.path.isdir(path):
        raise ToolError(f"{path}: not a directory")
    counts = {}
    unreadable = 0
    for file in files_under(path):
        extension = os.path.splitext(file)[1] or "(none)"
        try:
            with open(file, "rb") as data:
                lines = data.read().count(b"\n")
        except OSError:
            unreadable += 1
            continue
        files, total = counts.get(extension, (0, 0))
        counts[extension] = (files + 1, total + lines)
    report = [f"{extension:8} {files:4} files {lines:6} lines" for extension, (files, lines) in sorted(counts.items())]
    if unreadable:
        report.append(f"({unreadable} files could not be read: the sandbox keeps them out of reach)")
    return "\n".join(report)


class ToolError(Exception):
    pass


HANDLERS = {"python_outline": python_outline, "line_counts": line_counts}


def answer(request_id, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def handle(message):
    method = message.get("method")
    request_id = message.get("id")
    if request_id is None:
        return  # a notification: initialized, cancelled, ...
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        answer(request_id, {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "codemap", "version": "1.0.0"},
        })
    elif method == "ping":
        answer(request_id, {})
    elif method == "tools/list":
        answer(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        handler = HANDLERS.get(params.get("name"))
        if handler is None:
            answer(request_id, error={"code": -32602, "message": f"Unknown tool: {params.get('name')}"})
            return
        try:
            text = handler(params.get("arguments") or {})
            answer(request_id, {"content": [{"type": "text", "text": text}]})
        except (ToolError, KeyError) as error:
            answer(request_id, {"content": [{"type": "text", "text": str(error)}], "isError": True})
    else:
        answer(request_id, error={"code": -32601, "message": f"Method not found: {method}"})


def main():
    print("codemap: ready", file=sys.stderr)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            answer(None, error={"code": -32700, "message": "Parse error"})
            continue
        handle(message)


if __name__ == "__main__":
    main()
