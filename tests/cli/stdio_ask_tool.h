// A jp-style stdio tool for the CLI tests, as a Python script: asks `go`
// (Boolean) unless answered — its first argument is `tool.answers` as JSON —
// then reports the answer as JSON, so its type shows ("went: true").
#pragma once

namespace toolvfs {

inline constexpr char kStdioAsk[] = R"(import json, sys
answers = json.loads(sys.argv[1])
if "go" not in answers:
    print(json.dumps({"type": "needs_input",
                      "question": {"id": "go", "text": "Go on?", "answer_type": "Boolean"}}))
else:
    print(json.dumps({"type": "success", "content": "went: " + json.dumps(answers["go"])}))
)";

}  // namespace toolvfs
