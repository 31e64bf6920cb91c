"""A vfs tool (SDK: toolvfs_tool, found by toolvfs itself): counts the words
of one file of the project, which it reads through the host."""
import sys

import toolvfs_tool


def main(tool):
    path = tool.arguments["path"]
    words = len(tool.read(path).split())
    return f"{path}: {words} words"


if __name__ == "__main__":
    sys.exit(toolvfs_tool.tool_main(main))
