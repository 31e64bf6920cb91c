"""A client for ``toolvfs vfsd`` (docs/vfsd.md). One module, stdlib only.

vfsd serves one client files, pipes and temp files by handle, over a channel
of frames (a 4-byte big-endian length, then UTF-8 JSON)::

    import toolvfs_vfsd

    with toolvfs_vfsd.VfsdClient.spawn(["--project", "proj", "--allow", "logs"]) as vfsd:
        source = vfsd.open_read("logs/today.txt")
        for chunk in vfsd.chunks(source):          # bytes, until end of file
            ...
        out = vfsd.open_write("logs/summary.txt")
        vfsd.write_all(out, b"done\\n")
        vfsd.close(out)                             # the write lands here, atomically

Errors. A failed op raises VfsdError: ``.code`` is the daemon's code
("E_NOENT", "E_PERM", "E_CLOSED", ...), ``.message`` its one-line message.
A channel that ends or carries garbage raises VfsdChannelError.

Requests are answered one at a time in order; a client is not thread-safe.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import subprocess
from typing import BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple

__all__ = ["VfsdClient", "VfsdError", "VfsdChannelError"]


class VfsdError(Exception):
    """An error answer: ``code`` ("E_ARG", "E_PERM", ...) and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class VfsdChannelError(Exception):
    """The channel to the daemon ended or carried something that is not an answer."""


def _read_exactly(stream: BinaryIO, count: int) -> bytes:
    parts = []
    while count > 0:
        part = stream.read(count)
        if not part:
            raise VfsdChannelError("the daemon closed the channel")
        parts.append(part)
        count -= len(part)
    return b"".join(parts)


class VfsdClient:
    """One session with a vfsd daemon over a pair of binary streams."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO,
                 process: Optional[subprocess.Popen] = None) -> None:
        self._reader = reader
        self._writer = writer
        self._process = process
        self._next_id = 0

    # --- connecting ---------------------------------------------------------

    @classmethod
    def spawn(cls, args: Sequence[str] = (), toolvfs: Optional[str] = None) -> "VfsdClient":
        """Starts ``toolvfs vfsd ARGS`` with its stdin and stdout as the channel.

        ``toolvfs`` is the binary ($TOOLVFS_BINARY, else ``toolvfs`` on PATH).
        """
        binary = toolvfs or os.environ.get("TOOLVFS_BINARY") or "toolvfs"
        process = subprocess.Popen([binary, "vfsd", *args], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)
        return cls(process.stdout, process.stdin, process)

    @classmethod
    def from_socket(cls, sock: socket.socket) -> "VfsdClient":
        """A client over a connected stream socket (the other end of ``--fd N``)."""
        return cls(sock.makefile("rb"), sock.makefile("wb"))

    def close_channel(self) -> Optional[int]:
        """Ends the session (the daemon discards unclosed writes and removes its
        temp files) and returns the daemon's exit status when it was spawned."""
        try:
            self._writer.close()
        except OSError:
            pass
        if self._process is None:
            return None
        status = self._process.wait()
        self._reader.close()
        return status

    def __enter__(self) -> "VfsdClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close_channel()

    # --- requests -------------------------------------------------------------

    def call(self, op: str, **params) -> Dict:
        """Sends one request and returns its result, or raises VfsdError.
        Parameters given as None are left out."""
        self._next_id += 1
        request_id = str(self._next_id)
        request = {"id": request_id, "op": op,
                   "params": {name: value for name, value in params.items() if value is not None}}
        payload = json.dumps(request, separators=(",", ":")).encode("utf-8")
        self._writer.write(struct.pack(">I", len(payload)) + payload)
        self._writer.flush()
        (length,) = struct.unpack(">I", _read_exactly(self._reader, 4))
        try:
            answer = json.loads(_read_exactly(self._reader, length))
        except ValueError as error:
            raise VfsdChannelError(f"the daemon's answer is not JSON: {error}") from None
        if not isinstance(answer, dict) or answer.get("id") != request_id:
            raise VfsdChannelError(f"expected the answer to request {request_id}, got {answer!r:.200}")
        if answer.get("ok"):
            return answer.get("result", {})
        error = answer.get("error") or {}
        raise VfsdError(str(error.get("code", "E_IO")), str(error.get("message", "")))

    def ping(self) -> bool:
        return bool(self.call("ping")["pong"])

    def init(self, allow: Optional[List[str]] = None, read_only: Optional[bool] = None) -> None:
        """Narrows the allowlist (never widens it) or makes the session read-only."""
        self.call("init", allow=allow, read_only=read_only)

    def open_read(self, path: str) -> int:
        return int(self.call("open_read", path=path)["handle"])

    def open_write(self, path: str, append: bool = False) -> int:
        """A handle whose writes replace (or with ``append`` extend) the file at close."""
        return int(self.call("open_write", path=path, append=append)["handle"])

    def read(self, handle: int, max_bytes: Optional[int] = None) -> Tuple[bytes, bool]:
        """(data, eof). The daemon clamps ``max_bytes`` to its --read-max. An
        empty pipe gives (b"", False) at once."""
        result = self.call("read", h=handle, max=max_bytes)
        return base64.b64decode(result["data"]), bool(result["eof"])

    def write(self, handle: int, data: bytes) -> int:
        """Bytes written: all of them, except to a full pipe (possibly 0)."""
        return int(self.call("write", h=handle, data=base64.b64encode(data).decode("ascii"))["written"])

    def write_all(self, handle: int, data: bytes, chunk: int = 1 << 20) -> None:
        """Writes every byte of ``data`` in frames of at most ``chunk`` bytes (not for pipes)."""
        for start in range(0, len(data), chunk):
            self.write(handle, data[start:start + chunk])

    def close(self, handle: int) -> None:
        """Closes a handle; for a write handle, commits what was written."""
        self.call("close", h=handle)

    def stat(self, path: Optional[str] = None, handle: Optional[int] = None) -> Dict:
        """{kind, size, mode, modified[, path]} of a path or a handle."""
        return self.call("stat", path=path, h=handle)

    def list(self, path: str) -> List[Dict]:
        """The entries of a directory, sorted by name: [{name, kind}]."""
        return list(self.call("list", path=path)["entries"])

    def make_pipe(self) -> Tuple[int, int]:
        """(read end, write end)."""
        result = self.call("make_pipe")
        return int(result["r"]), int(result["w"])

    def temp(self) -> int:
        """A private temp file, readable and writable, gone at close."""
        return int(self.call("temp")["handle"])

    def seek(self, handle: int, offset: int, whence: str = "set") -> int:
        return int(self.call("seek", h=handle, offset=offset, whence=whence)["offset"])

    def chunks(self, handle: int, max_bytes: Optional[int] = None) -> Iterator[bytes]:
        """Reads a file handle to its end (for pipes, use read and wait yourself)."""
        while True:
            data, eof = self.read(handle, max_bytes)
            if data:
                yield data
            if eof:
                return
