"""Fixture tools of the MCP conformance suite that report from inside the
tool: ordinary vfs tools written with the Python SDK (sdk/toolvfs_tool.py),
so the suite checks the whole path of a tool's own progress and log lines:
tool -> VFS protocol -> host -> `toolvfs mcp` -> MCP client.

    python3 conformance_tools.py progress   # test_tool_with_progress
    python3 conformance_tools.py logging    # test_tool_with_logging

What the suite expects of each (@modelcontextprotocol/conformance 0.1.16,
scenarios tools-call-with-progress and tools-call-with-logging): progress
0/100, 50/100, 100/100 about 50 ms apart; three info log lines about 50 ms
apart; then a text result.
"""

import sys
import time

import toolvfs_tool


def with_progress(tool):
    for done in (0, 50, 100):
        if done:
            time.sleep(0.05)
        tool.progress(done, 100, f"step {done // 50 + 1} of 3")
    return "Progress tool completed: reported 0/100, 50/100 and 100/100"


def with_logging(tool):
    tool.log("info", "Tool execution started")
    time.sleep(0.05)
    tool.log("info", "Tool processing data")
    time.sleep(0.05)
    tool.log("info", "Tool execution completed")
    return "Logging tool completed: sent 3 log lines at info level"


TOOLS = {"progress": with_progress, "logging": with_logging}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TOOLS:
        print(f"usage: conformance_tools.py {'|'.join(TOOLS)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(toolvfs_tool.tool_main(TOOLS[sys.argv[1]]))
