#include "project/sql/content_hash.h"

#include <openssl/evp.h>

#include <cstring>
#include <memory>

namespace toolvfs {
namespace {

struct DigestContextDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

// Incremental SHA-256 over several pieces.
class Sha256Digest {
 public:
  Sha256Digest() : context_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr); }
  void Update(std::string_view bytes) { EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size()); }
  ContentHash Finish() {
    ContentHash hash{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(context_.get(), hash.data(), &length);
    return hash;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, DigestContextDeleter> context_;
};

}  // namespace

ContentHash Sha256(std::string_view bytes) {
  ContentHash hash{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), hash.data(), &length, EVP_sha256(), nullptr);
  return hash;
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

ContentHash ContentAddress(std::string_view bytes) {
  if (bytes.size() <= kChunkBytes) return Sha256(bytes);
  std::vector<ContentHash> chunk_hashes;
  for (size_t offset = 0; offset < bytes.size(); offset += kChunkBytes) {
    chunk_hashes.push_back(Sha256(bytes.substr(offset, kChunkBytes)));
  }
  return ChunkedContentHash(bytes.size(), chunk_hashes);
}

}  // namespace toolvfs
