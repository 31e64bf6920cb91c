"""A vfs tool for the SDK's end-to-end tests (tool_e2e_test.cc), in Python.

The same scenarios as sdk_test_tool.cc, named by argv[1]; each checks what
the real host answers and ends with `result` "ok ..." or an `error` listing
the failed checks.
"""

import os
import sys

# The SDK next to this repository; no __pycache__ in it (it may be read-only
# to a sandboxed tool, and it is source).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "sdk"))

import toolvfs_tool as tv  # noqa: E402


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)

    def expect_code(self, fn, code, what):
        try:
            fn()
        except tv.ToolvfsError as error:
            if error.code != code:
                self.failures.append(f"{what}: {error}, expected code {code}")
            return
        self.failures.append(f"{what}: succeeded, expected code {code}")

    def call(self, fn, what, default=None):
        try:
            return fn()
        except tv.ToolvfsError as error:
            self.failures.append(f"{what}: {error}")
            return default

    def finish(self, tool, summary):
        if not self.failures:
            return f"ok {summary}"
        tool.error(f"{len(self.failures)} checks failed; " + "; ".join(self.failures))
        return None


def fs(tool):
    checks = Checks()
    checks.expect(tool.read("hello.txt") == "hello world\n", "read hello.txt")
    checks.expect(tool.read("hello.txt", offset=6, length=5) == "world", "ranged read")
    checks.expect(tool.exists("hello.txt") and not tool.exists("nope.txt"), "exists")
    root = tool.list_dir()
    names = {(entry.path, entry.kind) for entry in root.entries}
    checks.expect(("hello.txt", "file") in names and ("src", "dir") in names, f"root listing {names}")
    page = tool.list_dir("many", offset=2, limit=3)
    checks.expect(len(page.entries) == 3 and page.total == 50 and page.entries[0].path == "f10.txt",
                  f"listing page {page}")
    metadata = tool.metadata("hello.txt")
    checks.expect(metadata.kind == "file" and metadata.size == 12 and metadata.modified.endswith("Z"),
                  f"metadata {metadata}")
    checks.expect(tool.write("out/deep/new.txt", "first\n") == 6, "write creates parents")
    checks.expect(tool.write("out/deep/new.txt", "second\n", mode="append") == 7, "append returns the bytes written")
    checks.expect(tool.read("out/deep/new.txt") == "first\nsecond\n", "read after append")
    checks.expect_code(lambda: tool.write("out/deep/new.txt", "x", mode="create"), tv.ALREADY_EXISTS,
                       "create over an existing file")
    tool.rename("out/deep/new.txt", "out/moved.txt")
    checks.expect(not tool.exists("out/deep/new.txt") and tool.exists("out/moved.txt"), "rename")
    tool.write("out/trash/a.txt", "a")
    tool.remove("out/moved.txt")
    checks.expect_code(lambda: tool.remove("out/trash"), tv.INVALID_PARAMS, "delete a non-empty dir")
    tool.remove("out/trash", recursive=True)
    checks.expect(not tool.exists("out/trash") and not tool.exists("out/moved.txt"), "deleted")
    grep = tool.grep("TODO")
    checks.expect([file.path for file in grep.matches] == ["src/a.py"] and grep.match_count == 1
                  and grep.matches[0].lines[0].line_number == 2, f"grep {grep}")
    context = tool.grep("todo", extensions=["py"], context=1, case_insensitive=True)
    checks.expect(len(context.matches) == 1 and len(context.matches[0].lines) == 3, f"grep context {context}")
    limited = tool.grep("line", paths=["many"], max_matches=5)
    checks.expect(limited.truncated and limited.match_count == 5, "grep max_matches")
    return checks.finish(tool, "fs")


def binary(tool):
    checks = Checks()
    blob = tool.read_bytes("bin/blob.bin")
    checks.expect(blob == bytes(range(256)), "read blob")
    checks.expect_code(lambda: tool.read("bin/blob.bin"), tv.INVALID_PARAMS, "read() of a binary file")
    checks.expect(tool.write("out/copy.bin", bytes(range(256))) == 256, "write bytes")
    checks.expect(tool.read_bytes("out/copy.bin") == bytes(range(256)), "bytes round trip")
    big = os.urandom(1 << 20)
    tool.write("out/big.bin", big)
    checks.expect(tool.read_bytes("out/big.bin") == big, "1 MiB of random bytes round trip")
    checks.expect(tool.read_bytes("unicode.txt", offset=0, length=2) == b"h\xc3", "a cut sequence")
    return checks.finish(tool, "binary")


def unicode(tool):
    checks = Checks()
    text = "héllo wörld — 日本語 😀\n"
    checks.expect(tool.read("unicode.txt") == text, "read unicode.txt")
    mixed = 'tab\there "quotes" \\backslash\\ \x01 control\r\n' + text
    tool.write("out/ü/ñame 😀.txt", mixed)
    checks.expect(tool.read("out/ü/ñame 😀.txt") == mixed, "unicode path round trip")
    checks.expect([entry.path for entry in tool.list_dir("out/ü").entries] == ["ñame 😀.txt"], "unicode name")
    checks.expect(len(tool.grep("日本").matches) == 2, "grep a unicode pattern")
    return checks.finish(tool, "unicode")


def errors(tool):
    checks = Checks()
    checks.expect_code(lambda: tool.read("missing.txt"), tv.NOT_FOUND, "read a missing file")
    checks.expect_code(lambda: tool.remove("missing.txt"), tv.NOT_FOUND, "delete a missing file")
    checks.expect_code(lambda: tool.call("fs.read", {"path": "hello.txt", "bogus": 1}), tv.INVALID_PARAMS,
                       "unknown parameter")
    checks.expect_code(lambda: tool.call("fs.read", {}), tv.INVALID_PARAMS, "missing parameter")
    checks.expect_code(lambda: tool.read("src"), tv.INVALID_PARAMS, "read a directory")
    checks.expect_code(lambda: tool.write("hello.txt", "x", mode="create"), tv.ALREADY_EXISTS,
                       "create over an existing file")
    checks.expect_code(lambda: tool.call("fs.frobnicate"), tv.METHOD_NOT_FOUND, "unknown method")
    try:
        tool.read("../outside.txt")
        checks.failures.append("a path leaving the project was read")
    except (tv.AccessDenied, tv.InvalidParams):
        pass
    checks.expect(tool.read("hello.txt") == "hello world\n", "the session goes on after errors")
    return checks.finish(tool, "errors")


def inflight(tool):
    checks = Checks()
    # The host serves grep on a worker thread and reads inline, so the reads
    # sent after the grep are usually answered before it.
    grep = tool.grep_async("line", paths=["many"])
    reads = [tool.read_async(f"many/f{i}.txt") for i in range(50)]
    for i in reversed(range(50)):
        checks.expect(reads[i].get() == f"line {i}\n", f"async read {i}")
    checks.expect(grep.get().match_count == 50, "grep sent before the reads")
    ids = [tool.send("fs.write", {"path": f"out/w{i}.txt", "content": str(i)}) for i in range(50)]
    for i in reversed(range(50)):
        checks.expect(tool.wait(ids[i])["size"] == len(str(i)), f"raw write {i}")
    mixed = [(tool.read_async(f"out/w{i}.txt"), tool.exists_async("hello.txt" if i % 2 == 0 else "nope.txt"))
             for i in range(50)]
    for i in reversed(range(50)):
        read, exists = mixed[i]
        checks.expect(exists.get() == (i % 2 == 0), f"async exists {i}")
        checks.expect(read.get() == str(i), f"read back {i}")
    return checks.finish(tool, "inflight")


def big(tool):
    checks = Checks()
    content = tool.read("big.txt")
    checks.expect(len(content.encode()) >= 4 << 20 and content.startswith("line 0 "), "big.txt")
    tool.write("out/big-copy.txt", content)
    checks.expect(tool.read("out/big-copy.txt") == content, "4 MiB round trip")
    return checks.finish(tool, "big")


def blocks(tool):
    return [tv.text_block("first block"), tv.text_block("second — ü"),
            tv.resource_block("file:///hello.txt", "hello world\n", "text/plain")]


def error(tool):
    tool.error("could not frobnicate: the widget is missing", trace=["frame 1", "frame 2"], transient=True)


def throw(tool):
    return tool.read("missing.txt")  # NotFound escapes: tool_main reports it


def arguments(tool):
    import json
    return json.dumps({"name": tool.name, "arguments": tool.arguments, "protocol_version": tool.protocol_version,
                       "root": tool.root, "has_fs_read": tool.has_method("fs.read")}, ensure_ascii=False)


def prints(tool):
    print("print after connect")  # goes to stderr: stdout is the protocol's
    sys.stdout.write("sys.stdout after connect\n")
    text = tool.read("hello.txt")
    print("more output", flush=True)
    return f"ok prints {len(text)}"


SCENARIOS = {function.__name__: function for function in
             (fs, binary, unicode, errors, inflight, big, blocks, error, throw, arguments, prints)}

if __name__ == "__main__":
    scenario = sys.argv[1] if len(sys.argv) > 1 else ""
    if scenario not in SCENARIOS:
        sys.exit(tv.tool_main(lambda tool: tool.error(f"unknown scenario '{scenario}'")))
    sys.exit(tv.tool_main(SCENARIOS[scenario]))
