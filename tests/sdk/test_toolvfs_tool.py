"""Unit tests of sdk/toolvfs_tool.py against a scripted host over two pipes.

Run by CTest (sdk_python_test) as `python3 -m unittest` with PYTHONPATH=sdk.
The same tools against the real host are in tool_e2e_test.cc.
"""

import base64
import json
import os
import random
import select
import threading
import time
import unittest

import toolvfs_tool as tv

INIT = {
    "jsonrpc": "2.0",
    "method": "init",
    "params": {
        "tool": {"name": "t", "arguments": {"path": "a.txt", "n": 3}, "answers": {"q": True},
                 "options": {"fast": True}},
        "protocol_version": "0.1.0",
        "host": {"name": "toolvfs", "version": "0.1.0", "root": "/tmp/project",
                 "methods": ["fs.read", "fs.write"], "concurrent_requests": True},
    },
}


class FakeHost:
    """The host's ends of two pipes; the tool reads to_tool, writes from_tool."""

    def __init__(self):
        self.tool_in, self.host_out = os.pipe()
        self.host_in, self.tool_out = os.pipe()
        self.reader = tv._LineReader(self.host_in)
        self.lines = []
        self._server = None

    def close(self):
        self.stop()
        for fd in (self.tool_in, self.host_out, self.host_in):
            try:
                os.close(fd)
            except OSError:
                pass

    def send(self, message):
        line = message if isinstance(message, str) else json.dumps(message)
        data = (line + "\n").encode()
        while data:
            data = data[os.write(self.host_out, data):]

    def reply(self, request_id, result):
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def reply_error(self, request_id, code, message):
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def close_to_tool(self):
        os.close(self.host_out)

    def read_line(self):
        line = self.reader.next()
        return None if line is None else line.decode()

    def read_message(self):
        return json.loads(self.read_line())

    def line_ready(self, timeout):
        return self.reader.has_line() or bool(select.select([self.host_in], [], [], timeout)[0])

    def connect(self, **options):
        return tv.connect(self.tool_in, self.tool_out, redirect_stdout=False, **options)

    def serve(self, handler):
        """Answers every request on a thread with handler(request): a result
        dict, or a ToolvfsError to send as an error answer."""
        def loop():
            while True:
                line = self.read_line()
                if line is None:
                    return
                self.lines.append(line)
                message = json.loads(line)
                if "id" not in message:
                    continue
                answer = handler(message)
                if isinstance(answer, tv.ToolvfsError):
                    self.reply_error(message["id"], answer.code, answer.message)
                else:
                    self.reply(message["id"], answer)
        self._server = threading.Thread(target=loop, daemon=True)
        self._server.start()

    def stop(self):
        if self.tool_out is not None:
            os.close(self.tool_out)
            self.tool_out = None
        if self._server is not None:
            self._server.join(10)
            self._server = None


class HostTestCase(unittest.TestCase):
    def setUp(self):
        self.host = FakeHost()
        self.addCleanup(self.host.close)

    def connect(self):
        self.host.send(INIT)
        return self.host.connect()


class ConnectTest(HostTestCase):
    def test_reads_init(self):
        self.host.send("")
        tool = self.connect()
        self.assertEqual(tool.name, "t")
        self.assertEqual(tool.arguments, {"path": "a.txt", "n": 3})
        self.assertEqual(tool.answers, {"q": True})
        self.assertEqual(tool.options, {"fast": True})
        self.assertEqual(tool.protocol_version, "0.1.0")
        self.assertEqual(tool.host_version, "0.1.0")
        self.assertEqual(tool.root, "/tmp/project")
        self.assertEqual(tool.methods, ["fs.read", "fs.write"])
        self.assertTrue(tool.has_method("fs.read"))
        self.assertFalse(tool.has_method("http.get"))
        self.assertFalse(tool.cancelled)

    def test_fails_without_init(self):
        self.host.close_to_tool()
        with self.assertRaises(tv.InvalidRequest) as raised:
            self.host.connect()
        self.assertIn("init", raised.exception.message)

    def test_fails_on_another_first_message(self):
        self.host.send({"jsonrpc": "2.0", "id": 1, "result": {}})
        with self.assertRaises(tv.InvalidRequest):
            self.host.connect()


def scripted_answer(request):
    method, params = request["method"], request["params"]
    if method == "fs.read" and params["path"] == "bin":
        return {"content": base64.b64encode(b"\xff\x00\x01").decode(), "size": 3, "encoding": "base64"}
    if method == "fs.read":
        return {"content": "héllo\n", "size": 42}
    if method == "fs.write":
        return {"size": 7}
    if method == "fs.exists":
        return {"exists": params["path"] == "yes"}
    if method == "fs.list_dir":
        return {"entries": [{"path": "a", "kind": "file"}, {"path": "d", "kind": "dir"}], "total": 5}
    if method == "fs.metadata":
        return {"kind": "file", "size": 12, "modified": "2024-05-02T09:14:03.211Z"}
    if method in ("fs.delete", "fs.rename"):
        return {}
    if method == "fs.grep":
        return {"matches": [{"path": "a.py", "lines": [{"line_number": 1, "content": "x", "is_match": False},
                                                      {"line_number": 2, "content": "TODO", "is_match": True}]}],
                "truncated": True}
    if method == "http.get":
        return {"status": 200, "headers": [{"name": "a", "value": "b"}], "body": "ok"}
    if method == "http.post":
        return {"status": 201, "headers": {"c": "d"}, "body": "AA==", "encoding": "base64"}
    if method == "process.run":
        return {"stdout": "out", "stderr": "err", "exit_code": 3, "truncated": False}
    return tv.MethodNotFound("unknown")


class CallsTest(HostTestCase):
    def test_typed_calls_send_exact_requests_and_decode_answers(self):
        tool = self.connect()
        self.host.serve(scripted_answer)

        self.assertEqual(tool.read("a.txt"), "héllo\n")
        self.assertEqual(tool.read_bytes("a.txt", offset=2, length=5), "héllo\n".encode())
        self.assertEqual(tool.read_bytes("bin"), b"\xff\x00\x01")
        with self.assertRaises(tv.InvalidParams) as raised:
            tool.read("bin")
        self.assertIn("read_bytes", raised.exception.message)

        self.assertEqual(tool.write("w.txt", 'text "q"\n'), 7)
        self.assertEqual(tool.write("w.bin", b"\x89PNG\xff", mode="create"), 7)
        self.assertEqual(tool.write("w.log", b"\x00\x01\x02", mode="append"), 7)
        with self.assertRaises(tv.InvalidParams):
            tool.write("w.txt", "x", mode="truncate")

        self.assertTrue(tool.exists("yes"))
        self.assertFalse(tool.exists("no"))
        listing = tool.list_dir("src", offset=1, limit=2)
        self.assertEqual(listing.entries, [tv.DirEntry("a", "file"), tv.DirEntry("d", "dir")])
        self.assertEqual(listing.total, 5)
        tool.list_dir()
        self.assertEqual(tool.metadata("a.txt"), tv.Metadata("file", 12, "2024-05-02T09:14:03.211Z"))
        self.assertIsNone(tool.remove("old"))
        tool.remove("dir", recursive=True)
        tool.rename("a", "b")
        tool.rename("a", "b", overwrite=True)

        grep = tool.grep("TODO", paths=["src"], extensions=["py"], context=1, case_insensitive=True,
                         max_matches=10, include_ignored=True)
        self.assertEqual(grep.matches[0].path, "a.py")
        self.assertEqual(grep.matches[0].lines[1], tv.GrepLine(2, "TODO", True))
        self.assertEqual(grep.match_count, 1)
        self.assertTrue(grep.truncated)
        tool.grep("x")

        get = tool.http_get("https://x.test/a", {"Authorization": "Bearer ${TOKEN}"})
        self.assertEqual((get.status, get.headers, get.body, get.binary), (200, [("a", "b")], "ok", False))
        post = tool.http_post("https://x.test/b", b"\xff")
        self.assertEqual((post.status, post.headers, post.body, post.binary), (201, [("c", "d")], b"\x00", True))
        run = tool.run("cargo", ["check", "--all"], envs=["CARGO_HOME"], stdin="in", timeout_s=5)
        self.assertEqual(run, tv.ProcessOutput("out", "err", 3, False))
        tool.run("ls")

        self.assertEqual(tool.call("fs.metadata", {"path": "x"})["kind"], "file")
        with self.assertRaises(tv.MethodNotFound) as raised:
            tool.call("fs.nope")
        self.assertEqual(raised.exception.code, tv.METHOD_NOT_FOUND)

        self.host.stop()
        requests = [json.loads(line) for line in self.host.lines]
        self.assertEqual(self.host.lines[0], '{"jsonrpc":"2.0","id":1,"method":"fs.read","params":{"path":"a.txt"}}')
        self.assertEqual([request["id"] for request in requests], list(range(1, len(requests) + 1)))
        params = [(request["method"], request["params"]) for request in requests]
        self.assertEqual(params, [
            ("fs.read", {"path": "a.txt"}),
            ("fs.read", {"path": "a.txt", "offset": 2, "length": 5}),
            ("fs.read", {"path": "bin"}),
            ("fs.read", {"path": "bin"}),
            ("fs.write", {"path": "w.txt", "content": 'text "q"\n'}),
            ("fs.write", {"path": "w.bin", "content": "iVBOR/8=", "encoding": "base64", "mode": "create"}),
            ("fs.write", {"path": "w.log", "content": "\x00\x01\x02", "mode": "append"}),
            ("fs.exists", {"path": "yes"}),
            ("fs.exists", {"path": "no"}),
            ("fs.list_dir", {"path": "src", "offset": 1, "limit": 2}),
            ("fs.list_dir", {"path": ""}),
            ("fs.metadata", {"path": "a.txt"}),
            ("fs.delete", {"path": "old"}),
            ("fs.delete", {"path": "dir", "recursive": True}),
            ("fs.rename", {"from": "a", "to": "b"}),
            ("fs.rename", {"from": "a", "to": "b", "overwrite": True}),
            ("fs.grep", {"pattern": "TODO", "paths": ["src"], "extensions": ["py"], "context": 1,
                         "case_insensitive": True, "max_matches": 10, "include_ignored": True}),
            ("fs.grep", {"pattern": "x"}),
            ("http.get", {"url": "https://x.test/a",
                          "headers": [{"name": "Authorization", "value": "Bearer ${TOKEN}"}]}),
            ("http.post", {"url": "https://x.test/b", "body": "/w==", "encoding": "base64"}),
            ("process.run", {"program": "cargo", "args": ["check", "--all"], "envs": ["CARGO_HOME"],
                             "stdin": "in", "timeout_s": 5}),
            ("process.run", {"program": "ls", "args": []}),
            ("fs.metadata", {"path": "x"}),
            ("fs.nope", {}),
        ])

    def test_error_answers_raise_the_subclass_for_their_code(self):
        tool = self.connect()

        def answer(request):
            path = request["params"]["path"]
            if path == "missing":
                return tv.NotFound("Not found: 'missing' does not exist")
            if path == "taken":
                return tv.ToolvfsError(tv.ALREADY_EXISTS, "exists")
            if path == "odd":
                return tv.ToolvfsError(-1, "odd code")
            return {"unexpected": True}
        self.host.serve(answer)
        with self.assertRaises(tv.NotFound) as raised:
            tool.read("missing")
        self.assertEqual(raised.exception.code, tv.NOT_FOUND)
        self.assertEqual(raised.exception.message, "Not found: 'missing' does not exist")
        self.assertEqual(str(raised.exception), "Not found: 'missing' does not exist (not found, -32002)")
        with self.assertRaises(tv.AlreadyExists):
            tool.write("taken", "x", mode="create")
        with self.assertRaises(tv.ToolvfsError) as raised:
            tool.exists("odd")
        self.assertEqual(type(raised.exception), tv.ToolvfsError)
        with self.assertRaises(tv.InternalError) as raised:
            tool.read("other")
        self.assertIn("malformed fs.read answer", raised.exception.message)

    def test_many_requests_in_flight_answered_in_any_order(self):
        tool = self.connect()
        for wait_in_reverse in (False, True):
            pending = [tool.read_async(f"file{i}") for i in range(50)]
            requests = [self.host.read_message() for _ in range(50)]
            for request in reversed(requests):
                self.host.reply(request["id"], {"content": "content of " + request["params"]["path"], "size": 1})
            order = range(49, -1, -1) if wait_in_reverse else range(50)
            for i in order:
                self.assertEqual(pending[i].get(), f"content of file{i}")

    def test_raw_send_and_wait(self):
        tool = self.connect()
        first = tool.send("fs.exists", {"path": "a"})
        second = tool.send("fs.exists", {"path": "b"})
        self.host.read_message()
        self.host.read_message()
        self.host.reply(second, {"exists": False})
        self.host.reply_error(first, tv.ACCESS_DENIED, "denied")
        self.assertEqual(tool.wait(second), {"exists": False})
        with self.assertRaises(tv.AccessDenied):
            tool.wait(first)
        with self.assertRaises(tv.InvalidRequest):
            tool.wait(first)  # each id once

    def test_threads_share_one_tool(self):
        tool = self.connect()
        threads, per_thread = 6, 30

        def server():
            rng = random.Random(42)
            handled = 0
            while handled < threads * per_thread:
                batch = [self.host.read_message()]
                while len(batch) < threads and self.host.line_ready(0.005):
                    batch.append(self.host.read_message())
                rng.shuffle(batch)
                for request in batch:
                    self.host.reply(request["id"], {"content": request["params"]["path"], "size": 0})
                handled += len(batch)
        server_thread = threading.Thread(target=server)
        server_thread.start()
        wrong = []

        def worker(t):
            for i in range(per_thread):
                path = f"{t}/{i}"
                if tool.read(path) != path:
                    wrong.append(path)
        workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
        server_thread.join()
        self.assertEqual(wrong, [])

    def test_large_answer(self):
        tool = self.connect()
        content = "".join(f'line {i} "quoted"\té\n' for i in range(200000))
        server = threading.Thread(target=lambda: self.host.reply(self.host.read_message()["id"],
                                                                 {"content": content, "size": len(content)}))
        server.start()
        started = time.monotonic()
        self.assertEqual(tool.read("big"), content)
        server.join()
        print(f"\n[ speed ] {len(content.encode()) / 1e6:.1f} MB fs.read answer through a pipe: "
              f"{(time.monotonic() - started) * 1e3:.1f} ms")


class NotificationsTest(HostTestCase):
    def test_cancel_sets_the_flag_and_reaches_the_handler(self):
        tool = self.connect()
        seen = []
        tool.on_notification = lambda method, params: seen.append((method, params))
        pending = tool.exists_async("a")
        request = self.host.read_message()
        self.host.send({"jsonrpc": "2.0", "method": "pending", "params": {"request_id": 1, "reason": "asking"}})
        self.host.send({"jsonrpc": "2.0", "method": "cancel"})
        self.host.reply(request["id"], {"exists": True})
        self.assertTrue(pending.get())
        self.assertTrue(tool.cancelled)
        with self.assertRaises(tv.Cancelled):
            tool.check_cancelled()
        self.assertEqual(seen, [("pending", {"request_id": 1, "reason": "asking"}), ("cancel", None)])

    def test_poll_notifications_without_a_request(self):
        tool = self.connect()
        tool.poll_notifications()
        self.assertFalse(tool.cancelled)
        self.host.send({"jsonrpc": "2.0", "method": "cancel"})
        for _ in range(500):
            tool.poll_notifications()
            if tool.cancelled:
                break
            time.sleep(0.002)
        self.assertTrue(tool.cancelled)

    def test_tool_cancels_its_own_request(self):
        tool = self.connect()
        pending = tool.grep_async("slow")
        request = self.host.read_message()
        pending.cancel()
        self.assertEqual(self.host.read_line(),
                         '{"jsonrpc":"2.0","method":"cancel","params":{"id":%d}}' % request["id"])
        self.host.reply_error(request["id"], tv.CANCELLED, "Cancelled")
        with self.assertRaises(tv.Cancelled):
            pending.get()

    def test_dropped_pending_discards_its_answer(self):
        tool = self.connect()
        dropped = tool.exists_async("a")
        dropped_id = dropped.id
        del dropped
        kept = tool.exists_async("b")
        self.host.read_message()
        second = self.host.read_message()
        self.host.reply(dropped_id, {"exists": True})
        self.host.reply(second["id"], {"exists": False})
        self.assertFalse(kept.get())
        with self.assertRaises(tv.InvalidRequest):
            tool.wait(dropped_id)

    def test_id_null_error_releases_the_only_outstanding_request(self):
        tool = self.connect()
        pending = tool.write_async("big", "x")
        self.host.read_message()
        self.host.send({"jsonrpc": "2.0", "id": None,
                        "error": {"code": -32700, "message": "Parse error: message longer than the limit"}})
        with self.assertRaises(tv.ParseError):
            pending.get()

    def test_end_of_stdin_fails_waiting_calls(self):
        tool = self.connect()
        pending = tool.exists_async("a")
        self.host.close_to_tool()
        with self.assertRaises(tv.InternalError) as raised:
            pending.get()
        self.assertIn("stdin ended", raised.exception.message)

    def test_stateful_tool_gets_apply_and_sends_state(self):
        tool = self.connect()
        self.host.send({"jsonrpc": "2.0", "method": "apply", "params": {"input": "y"}})
        self.host.send({"jsonrpc": "2.0", "method": "apply", "params": {"input": {"answer": True}}})
        self.assertEqual(tool.next_apply(), "y")
        self.assertEqual(tool.next_apply(), {"answer": True})
        tool.state("running", content="Next hunk")
        tool.state("waiting", content="Stage it?", question={"id": "stage", "text": "Stage?", "answer_type": "Boolean"})
        tool.state("stopped", result="Staged 3 hunks.")
        self.assertEqual(self.host.read_line(),
                         '{"jsonrpc":"2.0","method":"state","params":{"type":"running","content":"Next hunk"}}')
        self.assertEqual(self.host.read_message()["params"]["question"]["id"], "stage")
        self.assertEqual(self.host.read_message()["params"], {"type": "stopped", "result": "Staged 3 hunks."})
        # stopped is final: tool_main sends no result after it, and a second final message is refused.
        self.assertTrue(tool.finished)
        with self.assertRaises(tv.InvalidRequest):
            tool.result("again")
        with self.assertRaises(tv.InvalidParams):
            tool.state("paused")
        self.host.send({"jsonrpc": "2.0", "method": "cancel"})
        with self.assertRaises(tv.Cancelled):
            tool.next_apply()

    def test_progress_and_log_lines(self):
        tool = self.connect()
        tool.progress(0, 100, "starting")
        tool.progress(2.5)
        tool.log("info", "parsed")
        tool.log("warning", "odd file", logger="parser", data={"path": "a.txt"})
        tool.log("debug", "flag", data=False)  # falsy data is still data
        self.assertEqual(self.host.read_line(),
                         '{"jsonrpc":"2.0","method":"progress","params":{"progress":0,"total":100,"message":"starting"}}')
        self.assertEqual(self.host.read_message()["params"], {"progress": 2.5})
        self.assertEqual(self.host.read_message()["params"], {"level": "info", "message": "parsed"})
        self.assertEqual(self.host.read_message()["params"],
                         {"level": "warning", "message": "odd file", "logger": "parser", "data": {"path": "a.txt"}})
        self.assertEqual(self.host.read_message()["params"], {"level": "debug", "message": "flag", "data": False})
        for bad in (lambda: tool.progress(-1), lambda: tool.progress(True), lambda: tool.progress(1, 0),
                    lambda: tool.log("verbose", "x"), lambda: tool.log("info", 42)):
            with self.assertRaises(tv.InvalidParams):
                bad()


class FinalMessagesTest(HostTestCase):
    def test_result_and_error(self):
        tool = self.connect()
        tool.result([tv.text_block("Modified 2 files."), tv.resource_block("file:///a.txt", "new", "text/plain")])
        self.assertEqual(self.host.read_line(),
                         '{"jsonrpc":"2.0","method":"result","params":{"content":[{"type":"text",'
                         '"text":"Modified 2 files."},{"type":"resource","resource":{"uri":"file:///a.txt",'
                         '"mimeType":"text/plain","text":"new"}}]}}')
        self.assertTrue(tool.finished)
        with self.assertRaises(tv.InvalidRequest):
            tool.error("late")

        other = FakeHost()
        self.addCleanup(other.close)
        other.send(INIT)
        failing = other.connect()
        failing.error("Failed to parse input", trace=["at line 3"], transient=False)
        self.assertEqual(other.read_line(),
                         '{"jsonrpc":"2.0","method":"error","params":{"message":"Failed to parse input",'
                         '"trace":["at line 3"],"transient":false}}')
        self.assertTrue(failing.reported_error)

    def test_tool_main_reports_the_return_value(self):
        self.host.send(INIT)
        code = tv.tool_main(lambda tool: "done: " + tool.arguments["path"], in_fd=self.host.tool_in,
                            out_fd=self.host.tool_out, redirect_stdout=False)
        self.assertEqual(code, 0)
        self.assertEqual(self.host.read_message()["params"], {"content": "done: a.txt"})

    def test_tool_main_turns_a_toolvfs_error_into_the_error_notification(self):
        self.host.send(INIT)

        def serve():
            request = self.host.read_message()
            self.host.reply_error(request["id"], tv.NOT_FOUND, "Not found: 'a.txt' does not exist")
        server = threading.Thread(target=serve)
        server.start()
        code = tv.tool_main(lambda tool: tool.read("a.txt"), in_fd=self.host.tool_in, out_fd=self.host.tool_out,
                            redirect_stdout=False)
        server.join()
        self.assertEqual(code, 1)
        self.assertEqual(self.host.read_message()["params"], {"message": "Not found: 'a.txt' does not exist"})

    def test_tool_main_reports_other_exceptions_with_a_trace(self):
        self.host.send(INIT)

        def body(tool):
            raise KeyError("path")
        code = tv.tool_main(body, in_fd=self.host.tool_in, out_fd=self.host.tool_out, redirect_stdout=False)
        self.assertEqual(code, 1)
        params = self.host.read_message()["params"]
        self.assertEqual(params["message"], "KeyError: 'path'")
        self.assertTrue(any("raise KeyError" in line for line in params["trace"]))


class CodecTest(unittest.TestCase):
    def test_content_params_choose_text_or_base64(self):
        self.assertEqual(tv._content_params("héllo"), {"content": "héllo"})
        self.assertEqual(tv._content_params(b"h\xc3\xa9"), {"content": "hé"})
        self.assertEqual(tv._content_params(b"\xff"), {"content": "/w==", "encoding": "base64"})
        # Bytes smuggled in a str by surrogateescape travel as those bytes.
        self.assertEqual(tv._content_params(b"\xff".decode("utf-8", "surrogateescape")),
                         {"content": "/w==", "encoding": "base64"})

    def test_lines_are_compact_utf8(self):
        line = tv._dumps({"a": "é\n\"", "b": [1, None]})
        self.assertEqual(line, '{"a":"é\\n\\"","b":[1,null]}\n'.encode())
        self.assertEqual(tv._dumps({"a": "\ud800"}), b'{"a":"?"}\n')

    def test_line_reader_splits_chunks(self):
        read_fd, write_fd = os.pipe()
        stream = b"".join(b"x" * (i * 977 % 5000) + b"\n" for i in range(200)) + b"\n" + b"tail"

        def writer():
            offset, chunk = 0, 1
            while offset < len(stream):
                piece = stream[offset:offset + chunk]
                os.write(write_fd, piece)
                offset += len(piece)
                chunk = chunk * 3 % 7919 + 1
            os.close(write_fd)
        thread = threading.Thread(target=writer)
        thread.start()
        reader = tv._LineReader(read_fd)
        lines = []
        while (line := reader.next()) is not None:
            lines.append(bytes(line))
        thread.join()
        os.close(read_fd)
        self.assertEqual(lines, [b"x" * (i * 977 % 5000) for i in range(200)] + [b""])

    def test_error_classes(self):
        self.assertIsInstance(tv.ToolvfsError.from_code(tv.NOT_FOUND, "m"), tv.NotFound)
        self.assertEqual(tv.NotFound("m").code, tv.NOT_FOUND)
        self.assertEqual(tv.AccessDenied(tv.ACCESS_DENIED, "m", {"x": 1}).data, {"x": 1})
        self.assertTrue(issubclass(tv.Cancelled, tv.ToolvfsError))


if __name__ == "__main__":
    unittest.main()
