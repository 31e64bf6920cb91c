// Content addresses of the SQL stores (and of a materialized copy's files,
// which their sync-back compares): SHA-256, so that a tool cannot craft
// two different contents with one address and so make one file's bytes
// appear in another (content is stored once per address, across
// workspaces and snapshots). Below project/sql/ so that
// materialized_copy.h uses it without reaching into the SQL stores' room.
//
// Content up to kChunkBytes is stored whole and addressed by the SHA-256 of
// its bytes. Longer content is cut into kChunkBytes chunks from offset 0
// (the last may be shorter), each stored as content of its own, and the
// whole is addressed by ChunkedContentHash: a hash over a domain tag, the
// size and the chunks' hashes. The same bytes always cut the same way, so
// equal contents share one address either way, and the tag keeps a chunk
// list from ever colliding with plain bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolvfs {

// 64 KiB: a ranged read loads at most one chunk more than it returns, and
// an append rewrites at most one chunk (the last, partial one) plus what it
// adds; small files (most of a source tree) stay one row, one lookup.
inline constexpr uint64_t kChunkBytes = 64 * 1024;

using ContentHash = std::array<unsigned char, 32>;

ContentHash Sha256(std::string_view bytes);

// The address of content of `size` bytes made of chunks with `chunk_hashes`.
ContentHash ChunkedContentHash(uint64_t size, const std::vector<ContentHash>& chunk_hashes);

// The address of `bytes` as the store computes it: Sha256 for content up
// to kChunkBytes, ChunkedContentHash of its chunks for longer content.
ContentHash ContentAddress(std::string_view bytes);

// ContentAddress computed from pieces given in order, for content too large
// to hold at once (a materialized copy's files, hashed as they are read):
// holds at most one chunk's bytes and the hashes of the chunks before it.
class ContentAddressBuilder {
 public:
  void Append(std::string_view bytes);
  // The address of everything appended; call once.
  ContentHash Finish();

 private:
  std::string partial_chunk_;  // the bytes of the chunk being filled, < kChunkBytes
  std::vector<ContentHash> chunk_hashes_;
  uint64_t size_ = 0;
};

inline std::string_view HashBytes(const ContentHash& hash) {
  return std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size());
}

}  // namespace toolvfs
