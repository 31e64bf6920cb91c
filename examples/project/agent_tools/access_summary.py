#!/usr/bin/env python3
"""A jp-style stdio tool: summarises a web service's access log.

toolvfs renders the arguments into the command line (examples/project/
toolvfs.toml):  access_summary.py PATH --top=N  and runs this script in the
project directory under the OS sandbox, which lets it read only what the
tool's policy allows (logs/). It reads the file itself, with no protocol,
and prints one JSON outcome on stdout: {"type": "success", "content": ...}
or {"type": "error", "message": ...}.

Log lines: CLIENT METHOD PATH STATUS MILLISECONDS
"""
import collections
import json
import sys


def fail(message):
    print(json.dumps({"type": "error", "message": message}))
    sys.exit(1)


def main(argv):
    if len(argv) != 3 or not argv[2].startswith("--top="):
        fail("usage: access_summary.py PATH --top=N")
    path, top = argv[1], int(argv[2].removeprefix("--top="))
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            lines = log.read().splitlines()
    except OSError as error:
        fail(f"cannot read {path}: {error.strerror}")

    by_status = collections.Counter()
    latency_by_path = collections.defaultdict(list)
    skipped = 0
    for line in lines:
        fields = line.split()
        if len(fields) != 5 or not fields[3].isdigit():
            skipped += 1
            continue
        _, method, request_path, status, milliseconds = fields
        by_status[status] += 1
        try:
            latency_by_path[f"{method} {request_path}"].append(float(milliseconds))
        except ValueError:
            skipped += 1

    requests = sum(by_status.values())
    if requests == 0:
        fail(f"{path} holds no request lines ({skipped} other lines)")
    errors = sum(count for status, count in by_status.items() if status >= "400")
    report = [f"{path}: {requests} requests, {errors} with status >= 400"]
    report.append("by status: " + ", ".join(f"{status} x{count}" for status, count in sorted(by_status.items())))
    slowest = sorted(latency_by_path.items(), key=lambda item: -max(item[1]))[:top]
    report.append(f"slowest {len(slowest)}:")
    for request, latencies in slowest:
        report.append(f"  {max(latencies):7.1f} ms  {request}  ({len(latencies)} requests)")
    if skipped:
        report.append(f"({skipped} lines skipped: not 'CLIENT METHOD PATH STATUS MS')")
    print(json.dumps({"type": "success", "content": "\n".join(report)}))


if __name__ == "__main__":
    main(sys.argv)
