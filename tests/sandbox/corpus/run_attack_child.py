# Not an attack but the way into a process.run child: asks the host to run
# the arguments' "program" with "args" and reports the child's stdout (an
# attack program's own report) as this tool's result, or the host's
# refusal ("refused: ...").
import json
import sys

init = json.loads(sys.stdin.readline())
arguments = init["params"]["tool"]["arguments"]
request = {"jsonrpc": "2.0", "id": 1, "method": "process.run",
           "params": {"program": arguments["program"], "args": arguments.get("args", [])}}
sys.stdout.write(json.dumps(request) + "\n")
sys.stdout.flush()
answer = json.loads(sys.stdin.readline())
if "result" in answer:
    content = answer["result"]["stdout"] or "exit %d: %s" % (answer["result"]["exit_code"],
                                                            answer["result"]["stderr"])
else:
    content = "refused: " + answer["error"]["message"]
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "result",
                             "params": {"content": content}}) + "\n")
sys.stdout.flush()
