#!/usr/bin/env python3
"""rename_symbol: a vfs tool that renames an identifier across a project.

Arguments:
  from     the identifier to rename (required)
  to       its new name (required)
  paths    directories/files to limit the rename to (default: the project)
  dry_run  only report what would change (default: false)

It asks the host's grep for the files with a whole-word match (files ignored
by .gitignore and binary files are skipped), reads them all at once,
replaces whole-word occurrences and writes them back, then reports the
files and counts. Whole word means ASCII word boundaries, as in the grep
pattern (RE2's \\b).

Run on the example project (toolvfs puts the SDK on PYTHONPATH), from it:
  toolvfs exec --args '{"from": "OldName", "to": "NewName", "dry_run": true}' \\
      -- python3 agent_tools/rename_symbol.py
"""

import re
import sys

# No __pycache__ next to the SDK or this script: they may be read-only to a
# sandboxed tool, and they are source. toolvfs puts the SDK on PYTHONPATH.
sys.dont_write_bytecode = True

import toolvfs_tool as tv  # noqa: E402

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def rename(tool: tv.Tool) -> str:
    arguments = tool.arguments
    old, new = arguments.get("from"), arguments.get("to")
    for name, value in (("from", old), ("to", new)):
        if not isinstance(value, str) or not IDENTIFIER.match(value):
            raise tv.InvalidParams(f"'{name}' must be an identifier (letters, digits, _), got {value!r}")
    if old == new:
        raise tv.InvalidParams(f"'from' and 'to' are both {old!r}")
    paths = arguments.get("paths") or None
    dry_run = bool(arguments.get("dry_run", False))

    grep = tool.grep(rf"\b{old}\b", paths=paths, max_matches=1_000_000)
    files = [file.path for file in grep.matches]
    if not files:
        where = " in " + ", ".join(paths) if paths else ""
        return f"No whole-word occurrence of {old}{where}."

    # Read every file at once: the requests are all in flight together.
    word = re.compile(rf"\b{old}\b", re.ASCII)
    reads = [(path, tool.read_bytes_async(path)) for path in files]
    changes = []
    for path, pending in reads:
        # surrogateescape keeps any byte that is not UTF-8 as it was.
        text = pending.get().decode("utf-8", "surrogateescape")
        updated, count = word.subn(new, text)
        if count:
            changes.append((path, count, updated))

    if not dry_run:
        writes = [tool.write_async(path, updated.encode("utf-8", "surrogateescape")) for path, _, updated in changes]
        for pending in writes:
            pending.get()

    total = sum(count for _, count, _ in changes)
    verb = "Would rename" if dry_run else "Renamed"
    lines = [f"{verb} {old} to {new}: {total} occurrence{'s' if total != 1 else ''} in "
             f"{len(changes)} file{'s' if len(changes) != 1 else ''}" + (" (dry run, nothing written)" if dry_run else "")]
    lines += [f"  {path}: {count}" for path, count, _ in changes]
    if grep.truncated:
        lines.append("(The search hit the host's match limit: run again for the rest.)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(tv.tool_main(rename))
