// Content storage of the SQL stores (docs/stores.md, content_hash.h):
// each distinct content is one row of `contents`, stored whole up to
// kChunkBytes and as a list of shared chunks beyond, with a reference
// count kept in the same transaction as the rows that use it.
//
// Every function runs inside the caller's transaction on `db`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "project/content/content_hash.h"
#include "project/sql/sql_connection.h"

namespace toolvfs {

// The bytes a write stores: a plain view, which the function storing it
// hashes, or an AddressedContent, whose address and chunk hashes were
// computed from those very bytes when it was made, so nothing hashes them
// again (the sync-back of a materialized copy, which hashed them to check
// them). Why no "trust me, the address is X" parameter: a caller who got it
// wrong (or lied) would file bytes under another content's address, and
// every file sharing that address would read them. An AddressedContent
// cannot be made with an address other than its bytes' (content_hash.h),
// so the stores need not verify it, and a plain view is always hashed.
class ContentToWrite {
 public:
  // Implicit by design: a write takes either, and most pass plain bytes.
  ContentToWrite(std::string_view bytes) : bytes_(bytes) {}                                         // NOLINT
  ContentToWrite(const std::string& bytes) : bytes_(bytes) {}                                       // NOLINT
  ContentToWrite(const AddressedContent& content) : bytes_(content.bytes()), addressed_(&content) {}  // NOLINT

  std::string_view bytes() const { return bytes_; }
  // The Sha256 of bytes(), which must be at most kChunkBytes (its address).
  ContentHash WholeHash() const;
  // The Sha256 of each kChunkBytes chunk of bytes(), in order.
  std::vector<ContentHash> ChunkHashes() const;

 private:
  std::string_view bytes_;
  const AddressedContent* addressed_ = nullptr;  // must outlive this; its bytes are bytes_
};

// Adds one reference to `content`, inserting it if new; its id.
Result<int64_t> PutContent(SqlConnection& db, const ContentToWrite& content);

// PutContent(bytes) and ReleaseContent(old) in one: the caller's one
// reference to `old` becomes one to `bytes`; the id of `bytes`. When `old`
// is stored whole, has that one reference only and `bytes` (at most
// kChunkBytes) is not stored yet, its row is rewritten in place and keeps
// its id: one B-tree page instead of two (the last page of contents and
// the old row's). So a content id stands for its bytes only while a
// reference is held: the caller must hold the only row that uses `old`, and
// one no snapshot sees (what a snapshot sees never changes).
Result<int64_t> ExchangeContent(SqlConnection& db, int64_t old, const ContentToWrite& content);

// The address of content `content_id`.
Result<ContentHash> StoredContentAddress(SqlConnection& db, int64_t content_id);

// Adds one reference to the content `old` (of `old_size` bytes) followed
// by `extra`, rewriting no chunk of `old` but its last, partial one.
Result<int64_t> AppendContent(SqlConnection& db, int64_t old, uint64_t old_size, std::string_view extra);

// The bytes [offset, offset + length) of content `content_id` of `size`
// bytes; the caller has clamped the range to the content. Loads only the
// chunks the range covers.
Result<std::string> ReadContent(SqlConnection& db, int64_t content_id, uint64_t size, uint64_t offset,
                                uint64_t length);

// Inserts a content not stored yet, with address `hash`, `size` bytes,
// `data` (none for a chunk list, whose links the caller adds) and
// `references`, at the end of contents, with its row in content_addresses.
// Its id.
// A concurrent writer that stored the same content after the caller looked
// makes this fail as a duplicate key (its transaction is to run again).
Result<int64_t> InsertNewContent(SqlConnection& db, const ContentHash& hash, uint64_t size,
                                 std::optional<std::string_view> data, int64_t references);

Status AddContentReference(SqlConnection& db, int64_t content_id);

// Drops one reference to content `content_id`, deleting it (and its chunk
// list's references) when none is left.
Status ReleaseContent(SqlConnection& db, int64_t content_id);

// Deletes content `content_id` and its chunk list whatever its count says
// (garbage collection, after it found nothing refers to it), taking the
// list's references off its chunks; a chunk left with none is garbage of
// the next sweep.
Status DeleteContent(SqlConnection& db, int64_t content_id);

}  // namespace toolvfs
