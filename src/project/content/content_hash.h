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

// The Sha256 of each kChunkBytes chunk of `bytes` from offset 0, in order
// (the last may be shorter).
std::vector<ContentHash> Sha256OfChunks(std::string_view bytes);

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

// Bytes held together with their ContentAddress, computed from them when
// this is made, and (for content over kChunkBytes) the Sha256 of each
// kChunkBytes chunk that address was made of: a store can write it without
// hashing it again (sql_content.h, ContentToWrite).
//
// The address cannot be a lie: the only way to make one is to hand over
// the bytes, which it hashes itself, and it never lets them be changed or
// taken. So code that holds one (the sync-back of a materialized copy,
// whose apply-time check must hash the bytes it re-reads anyway) passes the
// address along with nothing for a store to verify, and no caller can make
// a store file bytes under another content's address.
class AddressedContent {
 public:
  explicit AddressedContent(std::string bytes);

  std::string_view bytes() const { return bytes_; }
  const ContentHash& address() const { return address_; }
  // Empty for content up to kChunkBytes (its address is its Sha256).
  const std::vector<ContentHash>& chunk_hashes() const { return chunk_hashes_; }

 private:
  std::string bytes_;
  ContentHash address_{};
  std::vector<ContentHash> chunk_hashes_;
};

// How many bytes Sha256 has hashed in this process: a counter for tests
// and benches, which tell from it how many times a path hashes the bytes
// it handles (the sync-back of a materialized copy: twice, not three
// times). Chunk lists (ChunkedContentHash) are not counted.
uint64_t Sha256BytesHashed();

inline std::string_view HashBytes(const ContentHash& hash) {
  return std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size());
}

}  // namespace toolvfs
