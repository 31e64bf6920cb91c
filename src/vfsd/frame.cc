#include "vfsd/frame.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/io.h"

namespace toolvfs {
namespace {

// How much is asked of read() at a time: large enough that streaming 4 KiB
// frames costs few system calls, small enough to stay in cache.
constexpr size_t kReadChunk = 64 * 1024;

}  // namespace

FrameReader::FrameReader(int fd, uint64_t max_frame_bytes) : fd_(fd), max_frame_bytes_(max_frame_bytes) {}

Result<bool> FrameReader::Fill(size_t count) {
  if (end_ - start_ >= count) return true;
  if (start_ > 0) {  // keep the unread tail at the front
    std::memmove(buffer_.data(), buffer_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  // Grown once to what the frame needs (bounded by the frame limit), never
  // shrunk and refilled per read: a 1 MiB frame arriving in small reads
  // costs one allocation, not one per read.
  if (buffer_.size() < count) buffer_.resize(std::max(count, kReadChunk));
  while (end_ < count) {
    ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got == 0) return false;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoToStatus(errno, "Cannot read the next vfsd frame");
    end_ += static_cast<size_t>(got);
  }
  return true;
}

Result<Frame> FrameReader::Next() {
  Frame frame;
  TOOLVFS_ASSIGN_OR_RETURN(bool has_header, Fill(kFrameHeaderBytes));
  if (!has_header) return frame;  // kEnd, at a boundary or inside a header
  const auto* header = reinterpret_cast<const unsigned char*>(buffer_.data() + start_);
  frame.length = (uint64_t{header[0]} << 24) | (uint64_t{header[1]} << 16) | (uint64_t{header[2]} << 8) |
                 uint64_t{header[3]};
  start_ += kFrameHeaderBytes;
  if (frame.length > max_frame_bytes_) {
    // Read past it without keeping it: at most one chunk in memory.
    uint64_t left = frame.length;
    while (left > 0) {
      if (start_ == end_) {
        TOOLVFS_ASSIGN_OR_RETURN(bool more, Fill(1));
        if (!more) return Frame{};  // kEnd inside the oversized frame
      }
      size_t skip = static_cast<size_t>(std::min<uint64_t>(left, end_ - start_));
      start_ += skip;
      left -= skip;
    }
    frame.kind = Frame::Kind::kTooLarge;
    return frame;
  }
  size_t length = static_cast<size_t>(frame.length);
  TOOLVFS_ASSIGN_OR_RETURN(bool complete, Fill(length));
  if (!complete) return Frame{};  // kEnd: truncated frame
  frame.kind = Frame::Kind::kPayload;
  frame.payload.assign(buffer_, start_, length);
  start_ += length;
  if (start_ == end_) start_ = end_ = 0;
  return frame;
}

std::string EncodeFrame(std::string_view payload) {
  std::string frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  uint32_t length = static_cast<uint32_t>(payload.size());
  frame += static_cast<char>((length >> 24) & 0xff);
  frame += static_cast<char>((length >> 16) & 0xff);
  frame += static_cast<char>((length >> 8) & 0xff);
  frame += static_cast<char>(length & 0xff);
  frame.append(payload);
  return frame;
}

Status WriteFrame(int fd, std::string_view payload) {
  return WriteFull(fd, EncodeFrame(payload), "the vfsd client");
}

}  // namespace toolvfs
