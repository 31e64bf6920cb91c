"""A stateful vfs tool for the tests (SPEC.md §4.6): asks two questions over
`state waiting` and takes the answers from `apply`, then stops with a result
built from them.

  1. `proceed` (Boolean): "Proceed with the survey?"
  2. `color` (Select red/green/blue): "Which color?"

Between the questions it writes `survey/progress.txt` through the host, so
the host must keep serving requests while the tool waits. The answers must
arrive typed (a JSON boolean, then one of the options): anything else is the
tool's error. Arguments: `fork` (bool) forks a child that sleeps, to prove
that abort leaves nothing behind (only without the sandbox: a sandboxed vfs
tool cannot fork); the process ids go to `survey/pids.txt`. Extra command-line
arguments are ignored (tests use one as a marker to find the processes).
"""
import json
import os
import sys
import time

import toolvfs_tool

COLORS = ["red", "green", "blue"]


def main(tool):
    if tool.arguments.get("fork"):
        child = os.fork()
        if child == 0:
            time.sleep(300)
            os._exit(0)
        tool.write("survey/pids.txt", f"{os.getpid()} {child}\n")
    tool.state("running", content="starting the survey")
    tool.state("waiting", content="first question",
               question={"id": "proceed", "text": "Proceed with the survey?", "answer_type": "Boolean"})
    proceed = tool.next_apply()
    if not isinstance(proceed, bool):
        tool.error(f"proceed must be a JSON boolean, got {json.dumps(proceed)}")
        return
    tool.write("survey/progress.txt", f"proceed={json.dumps(proceed)}\n")
    tool.state("running", content="asked 1 of 2")
    tool.state("waiting", question={"id": "color", "text": "Which color?",
                                    "answer_type": {"Select": {"options": COLORS}}})
    color = tool.next_apply()
    if color not in COLORS:
        tool.error(f"color must be one of {COLORS}, got {json.dumps(color)}")
        return
    tool.state("stopped", result=f"proceed={json.dumps(proceed)} color={color}")


if __name__ == "__main__":
    sys.exit(toolvfs_tool.tool_main(main))
