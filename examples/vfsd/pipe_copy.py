#!/usr/bin/env python3
"""Streams a project file through a vfsd pipe into another file.

    python3 examples/vfsd/pipe_copy.py PROJECT_DIR SOURCE TARGET [TOOLVFS]

Two handles joined by a pipe, as a command pipeline would be: the source
file is read in chunks and pushed into the pipe's write end; whatever the
pipe holds is drained into the target's write handle, which lands
atomically when it is closed. Nothing ever waits: a full pipe takes fewer
bytes (the rest is offered again), an empty one gives nothing yet.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk"))
import toolvfs_vfsd  # noqa: E402


def pipe_copy(vfsd, source_path, target_path):
    source = vfsd.open_read(source_path)
    target = vfsd.open_write(target_path)
    pipe_read, pipe_write = vfsd.make_pipe()
    pending, source_done, copied = b"", False, 0
    while True:
        if not source_done and not pending:
            pending, eof = vfsd.read(source, 65536)
            if eof and not pending:
                source_done = True
                vfsd.close(pipe_write)  # the reader sees eof once the pipe is drained
        if pending:
            written = vfsd.write(pipe_write, pending)
            pending = pending[written:]
        data, eof = vfsd.read(pipe_read, 65536)
        if data:
            vfsd.write(target, data)
            copied += len(data)
        if eof:
            break
    vfsd.close(target)
    vfsd.close(source)
    vfsd.close(pipe_read)
    return copied


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    project, source, target = sys.argv[1:4]
    toolvfs = sys.argv[4] if len(sys.argv) == 5 else None
    args = ["--project", project, "--allow", ".", "--read-max", "65536", "--no-audit"]
    with toolvfs_vfsd.VfsdClient.spawn(args, toolvfs=toolvfs) as vfsd:
        copied = pipe_copy(vfsd, source, target)
    print(f"copied {copied} bytes from {source} to {target} through a pipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
