// libFuzzer target: any byte stream a vfsd client sends goes through the
// frame reader, the request parser and a session without crashing, and
// every frame gets exactly one answer that is a JSON object with the
// request's id (or null), "ok", and either a result object or an error
// with a known code. The session runs on a memory store with a few files
// and the whole project allowed, so the ops reach the store, the handle
// table, pipes and temp files.
//
// Input: byte 0 picks the frame limit (small, to reach the skipping of
// oversized frames, or 64 KiB); the rest is the stream, read back from a
// memfd as the daemon reads its channel. Build and run with `make fuzz`.
#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "core/io.h"
#include "core/unique_fd.h"
#include "project/memory_store.h"
#include "vfsd/frame.h"
#include "vfsd/vfsd.h"

namespace toolvfs {
namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckAnswer(std::string_view answer) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  Check(parser.parse(simdjson::padded_string(answer)).get(root) == simdjson::SUCCESS);
  simdjson::dom::object object;
  Check(root.get_object().get(object) == simdjson::SUCCESS);
  simdjson::dom::element id = object["id"].value_unsafe();
  Check(id.is_null() || id.is_string());
  bool ok = false;
  Check(object["ok"].get_bool().get(ok) == simdjson::SUCCESS);
  if (ok) {
    Check(object["result"].is_object());
    return;
  }
  std::string_view code;
  Check(object["error"]["code"].get_string().get(code) == simdjson::SUCCESS);
  Check(code == "E_ARG" || code == "E_UNSUPPORTED" || code == "E_NOENT" || code == "E_PERM" || code == "E_IO" ||
        code == "E_CLOSED" || code == "E_RANGE" || code == "E_LIMIT");
  std::string_view message;
  Check(object["error"]["message"].get_string().get(message) == simdjson::SUCCESS);
  Check(!message.empty() && message.find('\n') == std::string_view::npos);
}

}  // namespace
}  // namespace toolvfs

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace toolvfs;
  if (size < 1) return 0;
  uint64_t max_frame = data[0] < 64 ? 32 : 64 * 1024;
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  UniqueFd channel(::memfd_create("vfsd-fuzz", MFD_CLOEXEC));
  Check(channel.valid());
  Check(WriteFull(channel.get(), stream, "memfd").ok());
  Check(::lseek(channel.get(), 0, SEEK_SET) == 0);

  std::unique_ptr<ProjectFiles> store = NewMemoryStore("fuzz");
  Check(store->Write("a.txt", "hello\n").ok());
  Check(store->Write("dir/b.bin", std::string(5000, 'b')).ok());
  VfsdOptions options;
  options.allow = {"."};
  options.max_handles = 8;
  options.read_max = 512;
  Result<std::unique_ptr<VfsdSession>> session = NewVfsdSession(*store, options);
  Check(session.ok());

  FrameReader reader(channel.get(), max_frame);
  while (true) {
    Result<Frame> frame = reader.Next();
    Check(frame.ok());
    if (frame->kind == Frame::Kind::kEnd) break;
    std::string answer = frame->kind == Frame::Kind::kTooLarge
                             ? (*session)->AnswerOversizedFrame(frame->length, max_frame)
                             : (*session)->Answer(frame->payload);
    CheckAnswer(answer);
    Check((*session)->OpenHandles() <= options.max_handles);
  }
  return 0;
}
