#include "project/content/content_hash.h"

// Nettle rather than OpenSSL's libcrypto: the same speed here (SHA-NI in
// both; nettle ahead on small contents, which skip EVP's method lookup), and
// loaded only with a SQL store (nettle_library.h), where libcrypto cost
// every process 1.4 MB resident just by being linked (docs/install.md,
// "Libraries loaded on first use").
#include <nettle/sha2.h>

#include <algorithm>
#include <atomic>
#include <utility>

namespace toolvfs {
namespace {

// Incremental SHA-256 over several pieces.
class Sha256Digest {
 public:
  Sha256Digest() { sha256_init(&context_); }
  void Update(std::string_view bytes) {
    sha256_update(&context_, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()));
  }
  ContentHash Finish() {
    ContentHash hash{};
    sha256_digest(&context_, hash.size(), hash.data());
    return hash;
  }

 private:
  sha256_ctx context_;
};

// Sha256BytesHashed's count. Relaxed: a statistic, read after the work it
// counts has been joined; one addition per call costs nothing next to the hash.
std::atomic<uint64_t> sha256_bytes_hashed{0};

}  // namespace

uint64_t Sha256BytesHashed() { return sha256_bytes_hashed.load(std::memory_order_relaxed); }

ContentHash Sha256(std::string_view bytes) {
  sha256_bytes_hashed.fetch_add(bytes.size(), std::memory_order_relaxed);
  Sha256Digest digest;
  digest.Update(bytes);
  return digest.Finish();
}

ContentHash ChunkedContentHash(uint64_t size, const std::vector<ContentHash>& chunk_hashes) {
  Sha256Digest digest;
  digest.Update(std::string_view("toolvfs chunked content v1", 27));  // the tag, with its NUL
  unsigned char size_bytes[8];
  for (int i = 0; i < 8; ++i) size_bytes[i] = static_cast<unsigned char>(size >> (56 - 8 * i));
  digest.Update(std::string_view(reinterpret_cast<const char*>(size_bytes), sizeof size_bytes));
  for (const ContentHash& hash : chunk_hashes) digest.Update(HashBytes(hash));
  return digest.Finish();
}

std::vector<ContentHash> Sha256OfChunks(std::string_view bytes) {
  std::vector<ContentHash> chunk_hashes;
  chunk_hashes.reserve((bytes.size() + kChunkBytes - 1) / kChunkBytes);
  for (size_t offset = 0; offset < bytes.size(); offset += kChunkBytes) {
    chunk_hashes.push_back(Sha256(bytes.substr(offset, kChunkBytes)));
  }
  return chunk_hashes;
}

ContentHash ContentAddress(std::string_view bytes) {
  if (bytes.size() <= kChunkBytes) return Sha256(bytes);
  return ChunkedContentHash(bytes.size(), Sha256OfChunks(bytes));
}

AddressedContent::AddressedContent(std::string bytes) : bytes_(std::move(bytes)) {
  if (bytes_.size() <= kChunkBytes) {
    address_ = Sha256(bytes_);
  } else {
    chunk_hashes_ = Sha256OfChunks(bytes_);
    address_ = ChunkedContentHash(bytes_.size(), chunk_hashes_);
  }
}

void ContentAddressBuilder::Append(std::string_view bytes) {
  size_ += bytes.size();
  while (!bytes.empty()) {
    if (partial_chunk_.empty() && bytes.size() >= kChunkBytes) {  // a whole chunk: no copy
      chunk_hashes_.push_back(Sha256(bytes.substr(0, kChunkBytes)));
      bytes.remove_prefix(kChunkBytes);
      continue;
    }
    const size_t taken = std::min<size_t>(bytes.size(), kChunkBytes - partial_chunk_.size());
    partial_chunk_.append(bytes.substr(0, taken));
    bytes.remove_prefix(taken);
    if (partial_chunk_.size() == kChunkBytes) {
      chunk_hashes_.push_back(Sha256(partial_chunk_));
      partial_chunk_.clear();
    }
  }
}

ContentHash ContentAddressBuilder::Finish() {
  // Up to one chunk is addressed by its bytes: that chunk's hash, or the
  // hash of what is still partial (nothing, for empty content).
  if (size_ <= kChunkBytes) return chunk_hashes_.empty() ? Sha256(partial_chunk_) : chunk_hashes_.front();
  if (!partial_chunk_.empty()) chunk_hashes_.push_back(Sha256(partial_chunk_));
  return ChunkedContentHash(size_, chunk_hashes_);
}

}  // namespace toolvfs
