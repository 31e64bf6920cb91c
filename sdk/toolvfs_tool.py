"""Write toolvfs "vfs" tools in Python (SPEC.md §4.5). One module, stdlib only.

A vfs tool does all its file, HTTP and process work by asking the host: it
writes JSON-RPC requests on its stdout and reads the answers on its stdin
(docs/protocol.md). This module is the whole client library::

    import sys
    import toolvfs_tool

    def main(tool):
        text = tool.read(tool.arguments["path"])      # raises on an error
        return f"read {len(text)} characters"          # becomes the result

    if __name__ == "__main__":
        sys.exit(toolvfs_tool.tool_main(main))

Errors. A failed call raises ToolvfsError (``.code`` is the JSON-RPC code,
``.message`` the host's one-line message), or rather the subclass for its
code: NotFound (-32002), AccessDenied (-32001), AlreadyExists (-32003),
InvalidParams (-32602), Cancelled (-32005), ... tool_main turns an escaping
exception into the tool's ``error`` notification.

Concurrency. The plain calls send one request and wait for its answer. The
``*_async`` forms return a Pending at once; ``.get()`` waits for that
answer. Many requests may be in flight and the host may answer them in any
order: answers for other requests are kept until those are waited for. A
Tool may be shared by threads. Low level: ``send(method, params) -> id`` and
``wait(id)``.

Progress and log lines. ``tool.progress(50, 100, "indexing")`` and
``tool.log("info", "parsed 120 files")`` tell whoever runs the tool how it
goes (docs/protocol.md, "Progress and log lines").

Host notifications. ``cancel`` sets ``tool.cancelled``; ``apply`` (stateful
tools) is queued for ``next_apply()``; every notification also reaches the
optional ``tool.on_notification(method, params)`` handler.

stdout. connect() keeps a private copy of fd 1 for the protocol and points
fd 1 (and so print()) at stderr: stray prints land in the host's log and
cannot corrupt the protocol.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import select
import sys
import threading
import traceback
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

__all__ = [
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "ACCESS_DENIED", "NOT_FOUND", "ALREADY_EXISTS", "TIMEOUT", "CANCELLED",
    "ToolvfsError", "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError",
    "AccessDenied", "NotFound", "AlreadyExists", "Timeout", "Cancelled",
    "DirEntry", "DirListing", "Metadata", "GrepLine", "GrepFile", "GrepResult", "HttpResponse",
    "ProcessOutput", "Pending", "Tool", "connect", "tool_main", "text_block", "resource_block",
]

PROTOCOL_VERSION = "0.1.0"

# --------------------------------------------------------------------------
# Errors

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
ACCESS_DENIED = -32001
NOT_FOUND = -32002
ALREADY_EXISTS = -32003
TIMEOUT = -32004
CANCELLED = -32005


class ToolvfsError(Exception):
    """An error answer from the host, or one the SDK found itself."""

    code = INTERNAL_ERROR
    name = "error"

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} ({self.name}, {self.code})"

    @staticmethod
    def from_code(code: int, message: str, data: Any = None) -> "ToolvfsError":
        """The subclass for `code` (ToolvfsError itself for an unknown one)."""
        cls = _ERROR_CLASSES.get(code, ToolvfsError)
        return cls(code, message, data)


def _error_class(class_name: str, error_code: int, readable: str) -> type:
    def __init__(self, *args):
        # Both Cls(message) and Cls(code, message[, data]) work.
        if len(args) == 1:
            args = (error_code, args[0])
        ToolvfsError.__init__(self, *args)

    return type(class_name, (ToolvfsError,), {"code": error_code, "name": readable, "__init__": __init__,
                                               "__doc__": f"JSON-RPC code {error_code}: {readable}."})


ParseError = _error_class("ParseError", PARSE_ERROR, "parse error")
InvalidRequest = _error_class("InvalidRequest", INVALID_REQUEST, "invalid request")
MethodNotFound = _error_class("MethodNotFound", METHOD_NOT_FOUND, "method not found")
InvalidParams = _error_class("InvalidParams", INVALID_PARAMS, "invalid params")
InternalError = _error_class("InternalError", INTERNAL_ERROR, "internal error")
AccessDenied = _error_class("AccessDenied", ACCESS_DENIED, "access denied")
NotFound = _error_class("NotFound", NOT_FOUND, "not found")
AlreadyExists = _error_class("AlreadyExists", ALREADY_EXISTS, "already exists")
Timeout = _error_class("Timeout", TIMEOUT, "timeout")
Cancelled = _error_class("Cancelled", CANCELLED, "cancelled")

_ERROR_CLASSES = {cls.code: cls for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams,
                                            InternalError, AccessDenied, NotFound, AlreadyExists, Timeout,
                                            Cancelled)}

# --------------------------------------------------------------------------
# Results


@dataclasses.dataclass(frozen=True)
class DirEntry:
    path: str  # the entry's name
    kind: str  # "file", "dir" or "symlink"


@dataclasses.dataclass(frozen=True)
class DirListing:
    entries: list
    total: int  # entries in the directory, whatever offset and limit


@dataclasses.dataclass(frozen=True)
class Metadata:
    kind: str
    size: int
    modified: str  # UTC RFC 3339 with milliseconds


@dataclasses.dataclass(frozen=True)
class GrepLine:
    line_number: int  # 1-based
    content: str
    is_match: bool  # False for a context line


@dataclasses.dataclass(frozen=True)
class GrepFile:
    path: str
    lines: list


@dataclasses.dataclass(frozen=True)
class GrepResult:
    matches: list  # GrepFile, sorted by path
    truncated: bool  # max_matches cut the search short

    @property
    def match_count(self) -> int:
        return sum(1 for file in self.matches for line in file.lines if line.is_match)


@dataclasses.dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: list  # (name, value) pairs
    body: Union[str, bytes]  # bytes when the host sent base64
    binary: bool


@dataclasses.dataclass(frozen=True)
class ProcessOutput:
    stdout: str
    stderr: str
    exit_code: int
    truncated: bool


def text_block(text: str) -> dict:
    """A text content block for result()."""
    return {"type": "text", "text": text}


def resource_block(uri: str, text: str, mime_type: Optional[str] = None) -> dict:
    """An embedded resource content block for result()."""
    resource = {"uri": uri}
    if mime_type:
        resource["mimeType"] = mime_type
    resource["text"] = text
    return {"type": "resource", "resource": resource}


# --------------------------------------------------------------------------
# Codec helpers


def _dumps(message: dict) -> bytes:
    """One compact NDJSON line. Lone surrogates (which no UTF-8 host would
    accept) become '?'."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace") + b"\n"


def _content_params(content: Union[str, bytes, bytearray, memoryview]) -> dict:
    """{"content"} for text, {"content", "encoding": "base64"} for other bytes."""
    if isinstance(content, str):
        try:
            content.encode("utf-8")
            return {"content": content}
        except UnicodeEncodeError:  # surrogate-escaped bytes: send the bytes they stand for
            content = content.encode("utf-8", "surrogateescape")
    data = bytes(content)
    try:
        return {"content": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise InternalError(f"malformed {what} answer from the host: bad base64 ({error})") from None


def _malformed(method: str, what: str) -> ToolvfsError:
    return InternalError(f"malformed {method} answer from the host: {what}")


def _add_optional(params: dict, **values: Any) -> dict:
    """Adds only the values that were given (the host rejects unknown or
    null-valued parameters it does not expect)."""
    for key, value in values.items():
        if value is None or value is False or (isinstance(value, (list, tuple)) and not value):
            continue
        params[key] = list(value) if isinstance(value, (list, tuple)) else value
    return params


def _headers_param(headers: Union[None, Mapping[str, str], Iterable]) -> Optional[list]:
    if not headers:
        return None
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    result = []
    for pair in pairs:
        if isinstance(pair, Mapping):
            result.append({"name": pair["name"], "value": pair["value"]})
        else:
            name, value = pair
            result.append({"name": name, "value": value})
    return result


def _decode_read_bytes(answer: dict) -> bytes:
    content = answer.get("content")
    if not isinstance(content, str):
        raise _malformed("fs.read", "no 'content' string")
    if answer.get("encoding") == "base64":
        return _b64decode(content, "fs.read")
    return content.encode("utf-8")


def _decode_read_text(answer: dict, path: str) -> str:
    content = answer.get("content")
    if not isinstance(content, str):
        raise _malformed("fs.read", "no 'content' string")
    if answer.get("encoding") == "base64":
        raise InvalidParams(f"'{path}' is not UTF-8 text (the host sent base64); use read_bytes()")
    return content


def _decode_listing(answer: dict) -> DirListing:
    entries = answer.get("entries")
    if not isinstance(entries, list):
        raise _malformed("fs.list_dir", "no 'entries' array")
    items = [DirEntry(entry.get("path", ""), entry.get("kind", "")) for entry in entries]
    return DirListing(items, answer.get("total", len(items)))


def _decode_metadata(answer: dict) -> Metadata:
    if not isinstance(answer.get("kind"), str):
        raise _malformed("fs.metadata", "no 'kind' string")
    return Metadata(answer["kind"], answer.get("size", 0), answer.get("modified", ""))


def _decode_grep(answer: dict) -> GrepResult:
    matches = answer.get("matches")
    if not isinstance(matches, list):
        raise _malformed("fs.grep", "no 'matches' array")
    files = [GrepFile(file.get("path", ""),
                      [GrepLine(line.get("line_number", 0), line.get("content", ""), bool(line.get("is_match")))
                       for line in file.get("lines", [])])
             for file in matches]
    return GrepResult(files, bool(answer.get("truncated", False)))


def _decode_http(answer: dict) -> HttpResponse:
    status = answer.get("status")
    if not isinstance(status, int):
        raise _malformed("http", "no 'status' integer")
    headers = answer.get("headers") or []
    if isinstance(headers, Mapping):
        pairs = [(str(name), str(value)) for name, value in headers.items()]
    else:
        pairs = [(header.get("name", ""), header.get("value", "")) for header in headers]
    body = answer.get("body", "")
    binary = answer.get("encoding") == "base64"
    return HttpResponse(status, pairs, _b64decode(body, "http") if binary else body, binary)


def _decode_run(answer: dict) -> ProcessOutput:
    if not isinstance(answer.get("exit_code"), int):
        raise _malformed("process.run", "no 'exit_code' integer")
    return ProcessOutput(answer.get("stdout", ""), answer.get("stderr", ""), answer["exit_code"],
                         bool(answer.get("truncated", False)))


# --------------------------------------------------------------------------
# Transport


class _LineReader:
    """Splits what arrives on a file descriptor into b'\\n'-terminated lines,
    reading with large os.read calls."""

    READ_SIZE = 256 * 1024

    def __init__(self, fd: int):
        self._fd = fd
        self._buffer = bytearray()
        self._scanned = 0  # no newline in buffer[:scanned]
        self._eof = False

    def has_line(self) -> bool:
        if self._buffer.find(b"\n", self._scanned) >= 0:
            return True
        self._scanned = len(self._buffer)
        return False

    def next(self) -> Optional[bytearray]:
        """The next line without its newline; None at the end of input
        (bytes after the last newline are dropped: a truncated message)."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = self._buffer[:end]
                del self._buffer[:end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if self._eof:
                return None
            chunk = os.read(self._fd, self.READ_SIZE)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


class Pending:
    """A request in flight; get() waits for its answer (once)."""

    def __init__(self, tool: "Tool", request_id: int, decode: Callable[[dict], Any]):
        self._tool = tool
        self.id = request_id
        self._decode = decode
        self._done = False

    def get(self) -> Any:
        """The decoded answer; raises ToolvfsError for an error answer."""
        if self._done:
            raise InvalidRequest(f"request {self.id} was already waited for")
        self._done = True
        return self._decode(self._tool.wait(self.id))

    def cancel(self) -> None:
        """Asks the host to abandon the request; get() then raises Cancelled,
        or returns the answer if the host was faster."""
        self._tool.cancel(self.id)

    def __del__(self):
        if not self._done:
            # Never takes the lock: the garbage collector may run this while
            # the same thread holds it.
            self._tool._forgotten.append(self.id)


class Tool:
    """The connection to the host, made by connect() from the init message.

    Attributes from init: name, arguments, answers, options,
    protocol_version, host_version, root (the project's display root),
    methods (what the host serves), init (the whole init params).
    """

    def __init__(self, in_fd: int, out_fd: int, init: dict, reader: _LineReader,
                 owns_out_fd: bool = False):
        self._in_fd = in_fd
        self._out_fd = out_fd
        self._owns_out_fd = owns_out_fd
        self._reader = reader
        self.init = init
        tool = init.get("tool") or {}
        host = init.get("host") or {}
        self.name: str = tool.get("name", "")
        self.arguments: dict = tool.get("arguments") or {}
        self.answers: dict = tool.get("answers") or {}
        self.options: dict = tool.get("options") or {}
        self.protocol_version: str = init.get("protocol_version", "")
        self.host_version: str = host.get("version", "")
        self.root: str = host.get("root", "")
        self.methods: list = [method for method in host.get("methods") or [] if isinstance(method, str)]
        # Called as on_notification(method, params) for every host
        # notification, on the thread that reads stdin. It must not call
        # this Tool's request methods.
        self.on_notification: Optional[Callable[[str, Any], None]] = None

        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._reading = False
        self._closed: Optional[ToolvfsError] = None
        self._next_id = 1
        self._outstanding: set = set()
        self._answers: dict = {}
        self._applies: list = []
        self._forgotten: list = []  # ids of dropped Pendings, see _drop_forgotten
        self._cancelled = False
        self._finished = False
        self._reported_error = False

    # --- init

    def has_method(self, method: str) -> bool:
        return method in self.methods

    # --- files (paths are relative to the project root; "" is the root)

    def read(self, path: str, offset: Optional[int] = None, length: Optional[int] = None) -> str:
        """The file's text. Raises InvalidParams for a file that is not UTF-8
        (use read_bytes) and NotFound for a missing one."""
        return self.read_async(path, offset, length).get()

    def read_async(self, path: str, offset: Optional[int] = None, length: Optional[int] = None) -> Pending:
        params = _add_optional({"path": path}, offset=offset, length=length)
        return self._start("fs.read", params, lambda answer: _decode_read_text(answer, path))

    def read_bytes(self, path: str, offset: Optional[int] = None, length: Optional[int] = None) -> bytes:
        """The file's bytes, text or binary."""
        return self.read_bytes_async(path, offset, length).get()

    def read_bytes_async(self, path: str, offset: Optional[int] = None, length: Optional[int] = None) -> Pending:
        params = _add_optional({"path": path}, offset=offset, length=length)
        return self._start("fs.read", params, _decode_read_bytes)

    def write(self, path: str, content: Union[str, bytes, bytearray], mode: str = "overwrite") -> int:
        """Writes text or bytes (UTF-8 goes as text, anything else as base64)
        and returns the number of bytes written. Parent directories are
        created. mode: "overwrite", "create" (AlreadyExists if present) or
        "append"."""
        return self.write_async(path, content, mode).get()

    def write_async(self, path: str, content: Union[str, bytes, bytearray], mode: str = "overwrite") -> Pending:
        if mode not in ("overwrite", "create", "append"):
            raise InvalidParams(f"mode must be 'overwrite', 'create' or 'append', got {mode!r}")
        params = {"path": path, **_content_params(content)}
        if mode != "overwrite":
            params["mode"] = mode
        return self._start("fs.write", params, lambda answer: answer.get("size", 0))

    def exists(self, path: str) -> bool:
        """False for a missing path; an error for a path the tool may not see."""
        return self.exists_async(path).get()

    def exists_async(self, path: str) -> Pending:
        def decode(answer: dict) -> bool:
            if not isinstance(answer.get("exists"), bool):
                raise _malformed("fs.exists", "no 'exists' flag")
            return answer["exists"]
        return self._start("fs.exists", {"path": path}, decode)

    def list_dir(self, path: str = "", offset: Optional[int] = None, limit: Optional[int] = None) -> DirListing:
        """Immediate entries sorted by name."""
        return self.list_dir_async(path, offset, limit).get()

    def list_dir_async(self, path: str = "", offset: Optional[int] = None, limit: Optional[int] = None) -> Pending:
        return self._start("fs.list_dir", _add_optional({"path": path}, offset=offset, limit=limit), _decode_listing)

    def metadata(self, path: str) -> Metadata:
        return self.metadata_async(path).get()

    def metadata_async(self, path: str) -> Pending:
        return self._start("fs.metadata", {"path": path}, _decode_metadata)

    def remove(self, path: str, recursive: bool = False) -> None:
        """Deletes a file, or a directory with recursive=True."""
        return self.remove_async(path, recursive).get()

    def remove_async(self, path: str, recursive: bool = False) -> Pending:
        return self._start("fs.delete", _add_optional({"path": path}, recursive=recursive), lambda answer: None)

    def rename(self, from_path: str, to_path: str, overwrite: bool = False) -> None:
        """Moves a file or directory; AlreadyExists if the target exists
        unless overwrite=True."""
        return self.rename_async(from_path, to_path, overwrite).get()

    def rename_async(self, from_path: str, to_path: str, overwrite: bool = False) -> Pending:
        params = _add_optional({"from": from_path, "to": to_path}, overwrite=overwrite)
        return self._start("fs.rename", params, lambda answer: None)

    def grep(self, pattern: str, paths: Optional[Sequence[str]] = None, extensions: Optional[Sequence[str]] = None,
             context: Optional[int] = None, case_insensitive: bool = False, max_matches: Optional[int] = None,
             include_ignored: bool = False) -> GrepResult:
        """Searches file contents; `pattern` is RE2 syntax."""
        return self.grep_async(pattern, paths, extensions, context, case_insensitive, max_matches,
                               include_ignored).get()

    def grep_async(self, pattern: str, paths: Optional[Sequence[str]] = None,
                   extensions: Optional[Sequence[str]] = None, context: Optional[int] = None,
                   case_insensitive: bool = False, max_matches: Optional[int] = None,
                   include_ignored: bool = False) -> Pending:
        if isinstance(paths, str) or isinstance(extensions, str):
            raise InvalidParams("paths and extensions are lists of strings")
        params = _add_optional({"pattern": pattern}, paths=paths, extensions=extensions, context=context,
                               case_insensitive=case_insensitive, max_matches=max_matches,
                               include_ignored=include_ignored)
        return self._start("fs.grep", params, _decode_grep)

    # --- network and processes (checked against the tool's policy)

    def http_get(self, url: str, headers=None) -> HttpResponse:
        """headers: a dict or (name, value) pairs; values may use ${VAR}."""
        return self.http_get_async(url, headers).get()

    def http_get_async(self, url: str, headers=None) -> Pending:
        return self._start("http.get", _add_optional({"url": url}, headers=_headers_param(headers)), _decode_http)

    def http_post(self, url: str, body: Union[str, bytes] = "", headers=None) -> HttpResponse:
        return self.http_post_async(url, body, headers).get()

    def http_post_async(self, url: str, body: Union[str, bytes] = "", headers=None) -> Pending:
        params = _add_optional({"url": url}, headers=_headers_param(headers))
        encoded = _content_params(body)
        params["body"] = encoded["content"]
        if "encoding" in encoded:
            params["encoding"] = encoded["encoding"]
        return self._start("http.post", params, _decode_http)

    def run(self, program: str, args: Sequence[str] = (), envs: Optional[Sequence[str]] = None,
            stdin: Optional[str] = None, timeout_s: Optional[int] = None) -> ProcessOutput:
        """Runs a program in the project root under the tool's policy. envs
        names host variables to pass on."""
        return self.run_async(program, args, envs, stdin, timeout_s).get()

    def run_async(self, program: str, args: Sequence[str] = (), envs: Optional[Sequence[str]] = None,
                  stdin: Optional[str] = None, timeout_s: Optional[int] = None) -> Pending:
        if isinstance(args, str):
            raise InvalidParams("args is a list of strings")
        params = _add_optional({"program": program, "args": list(args)}, envs=envs, stdin=stdin,
                               timeout_s=timeout_s)
        return self._start("process.run", params, _decode_run)

    # --- any method, raw

    def send(self, method: str, params: Optional[dict] = None) -> int:
        """Sends a request and returns its id without waiting."""
        if params is not None and not isinstance(params, dict):
            raise InvalidParams(f"params of {method} must be a dict")
        with self._lock:
            request_id = self._next_id
            self._next_id += 1
            self._outstanding.add(request_id)
        line = _dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        try:
            self._write(line)
        except BaseException:
            with self._lock:
                self._outstanding.discard(request_id)
            raise
        return request_id

    def wait(self, request_id: int) -> dict:
        """The `result` of request `request_id`; raises ToolvfsError (the
        subclass for its code) for an `error`. Each id is waited for once."""
        with self._lock:
            self._drop_forgotten()
            if request_id not in self._outstanding:
                raise InvalidRequest(f"no request with id {request_id} is waiting for an answer")
            while True:
                if request_id in self._answers:
                    answer = self._answers.pop(request_id)
                    self._outstanding.discard(request_id)
                    if isinstance(answer, ToolvfsError):
                        raise answer
                    return answer
                if self._closed is not None:
                    self._outstanding.discard(request_id)
                    raise self._closed
                if self._reading:
                    self._changed.wait()
                    continue
                self._read_one()

    def call(self, method: str, params: Optional[dict] = None) -> dict:
        return self.wait(self.send(method, params))

    def cancel(self, request_id: int) -> None:
        """Asks the host to abandon our own request (it answers Cancelled)."""
        self._write(_dumps({"jsonrpc": "2.0", "method": "cancel", "params": {"id": request_id}}))

    def forget(self, request_id: int) -> None:
        """Drops interest in a request: its answer is discarded."""
        self._forgotten.append(request_id)
        with self._lock:
            self._drop_forgotten()

    def _drop_forgotten(self) -> None:
        """Forgets the requests of dropped Pendings; called with the lock held."""
        while self._forgotten:
            request_id = self._forgotten.pop()
            self._outstanding.discard(request_id)
            self._answers.pop(request_id, None)

    # --- host notifications

    @property
    def cancelled(self) -> bool:
        """The host sent `cancel`: stop as soon as possible."""
        return self._cancelled

    def check_cancelled(self) -> None:
        """Raises Cancelled if the host asked the tool to stop."""
        if self._cancelled:
            raise Cancelled("the host cancelled the tool")

    def poll_notifications(self) -> None:
        """Reads what the host already sent, without blocking, so that
        `cancelled` is current in a loop that sends no requests."""
        with self._lock:
            while not self._reading and self._closed is None:
                if not self._reader.has_line():
                    ready, _, _ = select.select([self._in_fd], [], [], 0)
                    if not ready:
                        return
                self._read_one()

    def next_apply(self) -> Any:
        """Stateful tools: waits for the next `apply {input}`, returns input.
        Raises Cancelled when the host cancels."""
        with self._lock:
            while True:
                if self._applies:
                    return self._applies.pop(0)
                if self._cancelled:
                    raise Cancelled("the host cancelled the tool")
                if self._closed is not None:
                    raise self._closed
                if self._reading:
                    self._changed.wait()
                    continue
                self._read_one()

    # --- progress and log lines for whoever runs the tool

    LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        """Reports how far the tool is: `progress` of `total` (when known),
        with an optional `message` saying what it does now. The caller sees
        it (a terminal line in the CLI, notifications/progress in MCP). The
        host passes on at most 20 a second; report when something changed."""
        if isinstance(progress, bool) or not isinstance(progress, (int, float)) or progress < 0:
            raise InvalidParams(f"progress must be a non-negative number, got {progress!r}")
        if total is not None and (isinstance(total, bool) or not isinstance(total, (int, float)) or total <= 0):
            raise InvalidParams(f"total must be a positive number, got {total!r}")
        self._write(_dumps({"jsonrpc": "2.0", "method": "progress",
                            "params": _add_optional({"progress": progress}, total=total, message=message)}))

    def log(self, level: str, message: str, logger: Optional[str] = None, data: Any = None) -> None:
        """A log line for the caller: `level` is one of LOG_LEVELS (syslog's
        severities), `data` any JSON value. Shown on the CLI's stderr at its
        --log-level, sent to MCP clients as notifications/message at theirs.
        The host passes on at most 50 a second (a burst of 100)."""
        if level not in self.LOG_LEVELS:
            raise InvalidParams(f"log level must be one of {', '.join(self.LOG_LEVELS)}, got {level!r}")
        if not isinstance(message, str):
            raise InvalidParams(f"log message must be a string, got {type(message).__name__}")
        params: dict = _add_optional({"level": level, "message": message}, logger=logger)
        if data is not None:  # False, 0 and [] are data too
            params["data"] = data
        self._write(_dumps({"jsonrpc": "2.0", "method": "log", "params": params}))

    # --- the end

    def result(self, content: Union[str, list]) -> None:
        """The final `result`: a string or a list of content blocks
        (text_block, resource_block). Then the tool should exit."""
        if not isinstance(content, (str, list)):
            raise InvalidParams("result content must be a string or a list of content blocks")
        self._finish("result", {"content": content}, False)

    def error(self, message: str, trace: Optional[Sequence[str]] = None, transient: Optional[bool] = None) -> None:
        """The final `error`: the tool failed. Then the tool should exit."""
        params: dict = {"message": message}
        if trace:
            params["trace"] = list(trace)
        if transient is not None:
            params["transient"] = bool(transient)
        self._finish("error", params, True)

    def state(self, type: str, content: Any = None, question: Any = None, result: Any = None) -> None:
        """A `state` notification (stateful tools): type is "running",
        "waiting" (with a question) or "stopped" (with a result). "stopped"
        is final like result(): tool_main sends nothing after it."""
        if type not in ("running", "waiting", "stopped"):
            raise InvalidParams(f"state type must be running, waiting or stopped, got {type!r}")
        params: dict = {"type": type}
        for key, value in (("content", content), ("question", question), ("result", result)):
            if value is not None:
                params[key] = value
        if type == "stopped":
            self._finish("state", params, False)
            return
        self._write(_dumps({"jsonrpc": "2.0", "method": "state", "params": params}))

    @property
    def finished(self) -> bool:
        """A final result or error was sent."""
        return self._finished

    @property
    def reported_error(self) -> bool:
        return self._reported_error

    def close(self) -> None:
        """Closes the protocol's copy of stdout (connect() made it)."""
        if self._owns_out_fd:
            self._owns_out_fd = False
            os.close(self._out_fd)

    # --- internals

    def _start(self, method: str, params: dict, decode: Callable[[dict], Any]) -> Pending:
        return Pending(self, self.send(method, params), decode)

    def _finish(self, method: str, params: dict, is_error: bool) -> None:
        with self._lock:
            if self._finished:
                raise InvalidRequest("the tool already sent its final result or error")
            self._finished = True
            self._reported_error = is_error
        self._write(_dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    def _write(self, line: bytes) -> None:
        with self._write_lock:
            view = memoryview(line)
            while view:
                try:
                    written = os.write(self._out_fd, view)
                except BlockingIOError:
                    select.select([], [self._out_fd], [])
                    continue
                except OSError as error:
                    raise InternalError(f"cannot write to the host: {error.strerror}") from None
                view = view[written:]

    def _read_one(self) -> None:
        """Reads and dispatches one line; called with the lock held."""
        self._reading = True
        self._lock.release()
        notification = None
        try:
            try:
                line = self._reader.next()
                error = None
            except OSError as failure:
                line, error = None, InternalError(f"cannot read the host's messages: {failure.strerror}")
            parsed = self._parse(line) if line is not None else None
            if isinstance(parsed, dict) and isinstance(parsed.get("method"), str):
                notification = parsed
                if parsed["method"] == "cancel":
                    self._cancelled = True
                handler = self.on_notification
                if handler is not None:
                    handler(parsed["method"], parsed.get("params"))
        finally:
            self._lock.acquire()
            self._reading = False
            self._changed.notify_all()
        if line is None:
            self._closed = error or InternalError("the host closed the connection (stdin ended)")
        elif notification is not None:
            if notification["method"] == "apply":
                params = notification.get("params") or {}
                self._applies.append(params.get("input") if isinstance(params, dict) else None)
        elif isinstance(parsed, dict):
            self._store_answer(parsed)

    @staticmethod
    def _parse(line: bytearray) -> Optional[dict]:
        if not line.strip(b" \t\r"):
            return None
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            shown = bytes(line[:80]).decode("utf-8", "replace")
            print(f"toolvfs tool: ignoring a line from the host that is not a JSON object: {shown}",
                  file=sys.stderr)
            return None
        return message

    def _store_answer(self, message: dict) -> None:
        """Files a response under its id; called with the lock held."""
        self._drop_forgotten()
        request_id = message.get("id")
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            answer: Any = ToolvfsError.from_code(code if isinstance(code, int) else INTERNAL_ERROR,
                                                 str(error.get("message", "")), error.get("data"))
        else:
            answer = message.get("result")
            if not isinstance(answer, dict):
                answer = {} if answer is None else {"value": answer}
        if isinstance(request_id, int) and not isinstance(request_id, bool):
            if request_id in self._outstanding:
                self._answers[request_id] = answer
        elif request_id is None and isinstance(answer, ToolvfsError):
            # A line the host could not read (e.g. over its size limit): with
            # one request outstanding it can only have been that one.
            waiting = [known for known in self._outstanding if known not in self._answers]
            if len(waiting) == 1:
                self._answers[waiting[0]] = answer
            else:
                print(f"toolvfs tool: the host rejected a message: {answer.message}", file=sys.stderr)


def connect(in_fd: int = 0, out_fd: int = 1, redirect_stdout: bool = True) -> Tool:
    """Reads the host's init message and returns the connection.

    With redirect_stdout (and out_fd 1), the protocol gets a private copy of
    fd 1 and fd 1 itself (print, sys.stdout) goes to stderr. Raises
    InvalidRequest if stdin is a terminal or ends before init (the program
    was not started by toolvfs).
    """
    if os.isatty(in_fd):
        raise InvalidRequest("stdin is a terminal: this is a toolvfs vfs tool; run it with "
                             "`toolvfs exec -- PROGRAM` or configure it with runtime = \"vfs\"")
    owns_out_fd = False
    if redirect_stdout and out_fd == 1:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        copy = os.dup(1)  # not inherited by child processes
        os.dup2(2, 1)
        out_fd, owns_out_fd = copy, True
    reader = _LineReader(in_fd)
    cancelled = False
    while True:
        line = reader.next()
        if line is None:
            raise InvalidRequest("stdin ended before the host's init message: run this tool with toolvfs "
                                 "(runtime = \"vfs\")")
        if not line.strip(b" \t\r"):
            continue
        try:
            message = json.loads(line)
        except ValueError as error:
            raise ParseError(f"the first message from the host is not JSON: {error}") from None
        method = message.get("method") if isinstance(message, dict) else None
        if method == "cancel":
            cancelled = True
            continue
        if method != "init":
            shown = bytes(line[:80]).decode("utf-8", "replace")
            raise InvalidRequest(f"expected the host's init message first, got: {shown}")
        params = message.get("params")
        tool = Tool(in_fd, out_fd, params if isinstance(params, dict) else {}, reader, owns_out_fd)
        tool._cancelled = cancelled
        return tool


def tool_main(fn: Callable[[Tool], Any], **connect_options: Any) -> int:
    """Runs a tool's body: connects, calls fn(tool) and reports the outcome.

    What fn returns (a string, a list of content blocks, or None for "") is
    the `result`, unless fn already sent a result or error itself. A
    ToolvfsError becomes the `error` notification with its message; any
    other exception too, with its traceback as the trace. Returns the exit
    code: 0 after a result, 1 after an error, 2 if the host is not there.
    Use as ``sys.exit(tool_main(main))``.
    """
    try:
        tool = connect(**connect_options)
    except ToolvfsError as error:
        print(f"toolvfs tool: {error.message}", file=sys.stderr)
        return 2
    try:
        content = fn(tool)
        if not tool.finished:
            tool.result("" if content is None else content)
    except ToolvfsError as error:
        if not tool.finished:
            tool.error(error.message)
        return 1
    except Exception as error:  # noqa: BLE001 - every failure is reported to the host
        if not tool.finished:
            trace = [line.rstrip("\n") for line in traceback.format_exception(type(error), error, error.__traceback__)]
            tool.error(f"{type(error).__name__}: {error}", trace=trace)
        return 1
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 1 if tool.reported_error else 0
