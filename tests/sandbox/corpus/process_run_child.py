# Not an attack tool but the probe of the process.run boundary: asks the
# host to run `touch TARGET` for each of the arguments' "targets" and
# reports, per target, the child's exit code (or the host's refusal). The
# child is confined to this tool's filesystem policy (SPEC.md §5), so a
# target outside the project must fail whatever the policy says, and one in
# the project works only when the policy makes it writable.
import json
import sys

init = json.loads(sys.stdin.readline())
targets = init["params"]["tool"]["arguments"]["targets"]
report = {}
for number, target in enumerate(targets, start=1):
    request = {"jsonrpc": "2.0", "id": number, "method": "process.run",
               "params": {"program": "touch", "args": [target]}}
    sys.stdout.write(json.dumps(request) + "\n")
    sys.stdout.flush()
    answer = json.loads(sys.stdin.readline())
    if "result" in answer:
        report[target] = {"exit_code": answer["result"]["exit_code"],
                          "stderr": answer["result"]["stderr"]}
    else:
        report[target] = {"refused": answer["error"]["message"]}
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "result",
                             "params": {"content": json.dumps(report, sort_keys=True)}}) + "\n")
sys.stdout.flush()
