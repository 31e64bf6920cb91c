// Helpers of the vfsd tests: the stores a session is tested on, and a
// harness that sends requests to a session in process and parses answers.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "project/fs_store.h"
#include "project/memory_store.h"
#include "project/test_util.h"
#include "protocol/base64.h"
#include "protocol/json_writer.h"
#include "vfsd/vfsd.h"

namespace toolvfs {

// A store the session tests run on. Adding a backend (sqlite) is one line
// in Backends().
struct Backend {
  std::string name;
  // Opens a fresh, empty store; `directory` is a private directory the
  // store may keep its files in.
  std::function<std::unique_ptr<ProjectFiles>(const std::string& directory)> open;
  bool streams_by_descriptor = false;  // read handles are real descriptors
};

inline const std::vector<Backend>& Backends() {
  static const std::vector<Backend> kBackends = {
      {"fs", [](const std::string& directory) { return std::move(*OpenFsStore(directory)); }, true},
      {"memory", [](const std::string&) { return NewMemoryStore("vfsd-test"); }, false},
      {"sqlite", [](const std::string& directory) {
         return std::move(*OpenProject("sqlite:" + directory + "/store.db#vfsd-test"));
       }, false},
  };
  return kBackends;
}

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) { return info.param.name; }

// One parsed answer.
struct Answer {
  std::string raw;
  rapidjson::Document json;

  bool ok() const { return json.IsObject() && json.HasMember("ok") && json["ok"].IsBool() && json["ok"].GetBool(); }
  const rapidjson::Value& result() const { return json["result"]; }
  std::string code() const {
    return ok() || !json.HasMember("error") ? std::string() : json["error"]["code"].GetString();
  }
  std::string message() const {
    return ok() || !json.HasMember("error") ? std::string() : json["error"]["message"].GetString();
  }
  uint64_t Uint(const char* name) const { return result()[name].GetUint64(); }
  bool Bool(const char* name) const { return result()[name].GetBool(); }
  std::string String(const char* name) const { return result()[name].GetString(); }
  // A read's data, decoded.
  std::string Data() const { return *Base64Decode(String("data")); }
};

inline std::ostream& operator<<(std::ostream& stream, const Answer& answer) { return stream << answer.raw; }

inline Answer ParseAnswer(std::string raw) {
  Answer answer;
  answer.raw = std::move(raw);
  answer.json.Parse(answer.raw.c_str(), answer.raw.size());
  EXPECT_FALSE(answer.json.HasParseError()) << answer.raw;
  return answer;
}

// Sends requests to a session in process; ids are "1", "2", ...
class Harness {
 public:
  Harness(ProjectFiles& store, const VfsdOptions& options) {
    Result<std::unique_ptr<VfsdSession>> session = NewVfsdSession(store, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (session.ok()) session_ = std::move(*session);
  }

  // `params` is a JSON object's text.
  Answer Call(std::string_view op, std::string_view params = "{}") {
    std::string id = std::to_string(++last_id_);
    std::string payload = "{\"id\":\"" + id + "\",\"op\":\"" + std::string(op) + "\",\"params\":" + std::string(params) + "}";
    Answer answer = ParseAnswer(session_->Answer(payload));
    EXPECT_TRUE(answer.json.IsObject() && answer.json["id"].IsString() && answer.json["id"].GetString() == id)
        << answer.raw;
    return answer;
  }

  // The handle of a successful open_read/open_write/temp, else 0 (and a failure).
  uint64_t Open(std::string_view op, std::string_view params = "{}") {
    Answer answer = Call(op, params);
    EXPECT_TRUE(answer.ok()) << op << " " << params << ": " << answer;
    return answer.ok() ? answer.Uint("handle") : 0;
  }

  Answer Read(uint64_t handle, uint64_t max) {
    return Call("read", "{\"h\":" + std::to_string(handle) + ",\"max\":" + std::to_string(max) + "}");
  }
  Answer Write(uint64_t handle, std::string_view bytes) {
    return Call("write", "{\"h\":" + std::to_string(handle) + ",\"data\":\"" + Base64Encode(bytes) + "\"}");
  }
  Answer Close(uint64_t handle) { return Call("close", "{\"h\":" + std::to_string(handle) + "}"); }

  // Reads `handle` to its end in reads of `max`.
  std::string ReadAll(uint64_t handle, uint64_t max = 4096) {
    std::string all;
    for (int round = 0; round < 100000; ++round) {
      Answer answer = Read(handle, max);
      EXPECT_TRUE(answer.ok()) << answer;
      if (!answer.ok()) break;
      all += answer.Data();
      if (answer.Bool("eof")) break;
    }
    return all;
  }

  VfsdSession& session() { return *session_; }
  void End() { session_.reset(); }

 private:
  std::unique_ptr<VfsdSession> session_;
  int last_id_ = 0;
};

// A JSON string literal for `text` (quotes included).
inline std::string JsonString(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return JsonText(buffer);
}

inline std::string PathParams(std::string_view path) { return "{\"path\":" + JsonString(path) + "}"; }

}  // namespace toolvfs
