// vfsd frames (docs/vfsd.md): a 4-byte big-endian length, then that many
// bytes of UTF-8 JSON.
//
// FrameReader reads them from a blocking descriptor (a pipe, or one end of a
// socketpair). A frame declared longer than the limit is read past, never
// kept, so a client that sends one oversized frame gets an error for it and
// the session goes on with the next frame. The end of the stream, whether
// at a frame boundary or in the middle of a frame (a client that died while
// writing), ends the session; neither is an error.
//
// Thread safety: a FrameReader is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace toolvfs {

// The frame limit unless --max-frame says otherwise: 16 MiB of JSON, i.e.
// a write of 12 MiB of base64-encoded data.
inline constexpr uint64_t kDefaultMaxFrameBytes = 16 * 1024 * 1024;

// Bytes of the length prefix.
inline constexpr size_t kFrameHeaderBytes = 4;

struct Frame {
  enum class Kind {
    kPayload,   // `payload` holds the frame's bytes
    kTooLarge,  // the frame was longer than the limit and has been skipped
    kEnd,       // the stream ended (cleanly or inside a frame)
  };
  Kind kind = Kind::kEnd;
  std::string payload;
  uint64_t length = 0;  // the length the frame declared
};

class FrameReader {
 public:
  // Reads from `fd` (not owned; must outlive the reader). Frames longer
  // than `max_frame_bytes` are skipped.
  FrameReader(int fd, uint64_t max_frame_bytes);

  // The next frame. Blocks until it is complete or the stream ends. Io if
  // reading the descriptor fails (other than EINTR).
  Result<Frame> Next();

 private:
  // Makes at least `count` unread bytes available in buffer_; false at the
  // end of the stream.
  Result<bool> Fill(size_t count);

  int fd_;
  uint64_t max_frame_bytes_;
  std::string buffer_;  // bytes read; [start_, end_) not yet consumed
  size_t start_ = 0;
  size_t end_ = 0;
};

// `payload` with its length prefix. The caller keeps payloads below 4 GiB.
std::string EncodeFrame(std::string_view payload);

// Writes `payload` as one frame to `fd`, retrying on EINTR and short writes.
Status WriteFrame(int fd, std::string_view payload);

}  // namespace toolvfs
