#include "project/sql/sql_content.h"

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "project/content/content_hash.h"

namespace toolvfs {
namespace {

constexpr const char* kFindContent = "SELECT content_id FROM content_addresses WHERE hash=?1";
constexpr const char* kAddReferences = "UPDATE contents SET reference_count=reference_count+?2 WHERE id=?1";
// Each change of a count is one statement that reads and writes the row
// under its row lock, so writers of two workspaces (or two files) sharing
// a content never both count from the same old value.
// The hash is checked again under the row lock: a row found by its
// address may have been rewritten in place since (ExchangeContent).
constexpr const char* kAddReferenceIfStored =
    "UPDATE contents SET reference_count=reference_count+1 WHERE id=?1 AND hash=?2 RETURNING id";
constexpr const char* kContentAddress = "SELECT hash FROM contents WHERE id=?1";
// ExchangeContent's rewrite of a whole content held by one reference; the
// rewrite checks the count again under the row lock, since a concurrent
// writer may have found the content by its address meanwhile.
constexpr const char* kSoleWholeContentAddress =
    "SELECT hash, former_hash FROM contents WHERE id=?1 AND reference_count=1 AND data IS NOT NULL";
constexpr const char* kRewriteSoleContent =
    "UPDATE contents SET hash=?2, size=?3, data=?4, former_hash=?5 WHERE id=?1 AND reference_count=1 RETURNING id";
constexpr const char* kDeleteAddressByHash = "DELETE FROM content_addresses WHERE hash=?1";
// A new content goes at the end of contents (the engine numbers it).
constexpr const char* kInsertContent =
    "INSERT INTO contents(hash, size, reference_count, data) VALUES(?1, ?2, ?3, ?4) RETURNING id";
constexpr const char* kInsertAddress = "INSERT INTO content_addresses(hash, content_id) VALUES(?1, ?2)";
// The same where the address may have a former content's row (SQLite:
// RewriteSoleContent), which no longer has these bytes: the row is taken
// over. A row whose content has the bytes is never there: the content
// would have been found by it (ReferenceExisting).
constexpr const char* kInsertOrTakeOverAddress =
    "INSERT INTO content_addresses(hash, content_id) VALUES(?1, ?2) "
    "ON CONFLICT(hash) DO UPDATE SET content_id=excluded.content_id";
// Before the content row goes: its address and the row of its former one,
// if that is still its own, found through the content's row.
constexpr const char* kDeleteAddress =
    "DELETE FROM content_addresses WHERE content_id=?1 AND hash IN "
    "(SELECT hash FROM contents WHERE id=?1 UNION ALL SELECT former_hash FROM contents WHERE id=?1)";
// One reference fewer, in one statement: what is left and whether the
// content is a chunk list (a content left with none is deleted next).
constexpr const char* kReleaseReference =
    "UPDATE contents SET reference_count=reference_count-1 WHERE id=?1 "
    "RETURNING reference_count, CASE WHEN data IS NULL THEN 1 ELSE 0 END";
constexpr const char* kContentState =
    "SELECT reference_count, CASE WHEN data IS NULL THEN 1 ELSE 0 END FROM contents WHERE id=?1";
constexpr const char* kDeleteContent = "DELETE FROM contents WHERE id=?1";
constexpr const char* kInlineContent = "SELECT data FROM contents WHERE id=?1";
constexpr const char* kInsertChunkLink =
    "INSERT INTO content_chunks(content_id, sequence, chunk_id) VALUES(?1, ?2, ?3)";
constexpr const char* kChunkList =
    "SELECT cc.chunk_id, c.hash, c.size FROM content_chunks cc JOIN contents c ON c.id=cc.chunk_id "
    "WHERE cc.content_id=?1 ORDER BY cc.sequence";
constexpr const char* kChunkData =
    "SELECT c.data FROM content_chunks cc JOIN contents c ON c.id=cc.chunk_id "
    "WHERE cc.content_id=?1 AND cc.sequence>=?2 AND cc.sequence<=?3 ORDER BY cc.sequence";
constexpr const char* kDeleteChunkLinks = "DELETE FROM content_chunks WHERE content_id=?1";
// One reference fewer on each chunk of list ?1 per link to it (a chunk may
// be linked at several positions).
constexpr const char* kReleaseListedChunks =
    "UPDATE contents SET reference_count=reference_count-"
    "(SELECT count(*) FROM content_chunks WHERE content_id=?1 AND chunk_id=contents.id) "
    "WHERE id IN (SELECT chunk_id FROM content_chunks WHERE content_id=?1)";

// A content a row refers to is not there: a bug of ours or a damaged file.
Status MissingContentError(int64_t content_id) {
  return InternalError("Content " + std::to_string(content_id) + " of the store is missing");
}

// A content address as a column holds it.
Result<ContentHash> AddressOf(std::string_view stored) {
  ContentHash hash{};
  if (stored.size() != hash.size()) return InternalError("A content hash of the store is damaged");
  std::memcpy(hash.data(), stored.data(), hash.size());
  return hash;
}

// The id of the content with address `hash`, if it is stored.
Result<std::optional<int64_t>> FindContent(SqlConnection& db, const ContentHash& hash) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement find, db.Prepare(kFindContent));
  find.BindBlob(1, HashBytes(hash));
  TOOLVFS_ASSIGN_OR_RETURN(bool found, find.Step());
  if (!found) return std::optional<int64_t>();
  return std::optional<int64_t>(find.Int(0));
}

// The id of the content with address `hash`, with one more reference, if
// it is stored already. A content found but deleted before the reference
// was added (its last reference dropped by a concurrent writer) counts as
// not stored: the caller inserts it anew.
Result<std::optional<int64_t>> ReferenceExisting(SqlConnection& db, const ContentHash& hash) {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> id, FindContent(db, hash));
  if (!id) return id;
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement add, db.Prepare(kAddReferenceIfStored));
  add.Bind(1, *id).BindBlob(2, HashBytes(hash));
  TOOLVFS_ASSIGN_OR_RETURN(bool still_stored, add.Step());
  if (!still_stored) return std::optional<int64_t>();
  return id;
}

// Gives content `id` the address `hash`. Without row locks (SQLite) the
// address may have a former content's row left (RewriteSoleContent), which
// is taken over; with them (PostgreSQL) no such row is ever left, and a
// duplicate is a concurrent writer's insert that makes the transaction run
// again.
Status InsertAddress(SqlConnection& db, const ContentHash& hash, int64_t id) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement address,
                           db.Prepare(db.dialect().row_locks ? kInsertAddress : kInsertOrTakeOverAddress));
  address.BindBlob(1, HashBytes(hash)).Bind(2, id);
  return address.Run();
}

}  // namespace

Result<int64_t> InsertNewContent(SqlConnection& db, const ContentHash& hash, uint64_t size,
                                 std::optional<std::string_view> data, int64_t references) {
  int64_t id = 0;
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement insert, db.Prepare(kInsertContent));
    insert.BindBlob(1, HashBytes(hash)).Bind(2, static_cast<int64_t>(size)).Bind(3, references);
    if (data) {
      insert.BindBlob(4, *data);
    } else {
      insert.BindNull(4);
    }
    TOOLVFS_ASSIGN_OR_RETURN(id, insert.InsertedId());
  }
  TOOLVFS_RETURN_IF_ERROR(InsertAddress(db, hash, id));
  return id;
}

namespace {

// Adds one reference to the content `bytes` (at most kChunkBytes) with
// address `hash`, stored whole, inserting it if new. Returns its id.
Result<int64_t> PutWholeContent(SqlConnection& db, std::string_view bytes, const ContentHash& hash) {
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> existing, ReferenceExisting(db, hash));
  if (existing) return *existing;
  return InsertNewContent(db, hash, bytes.size(), bytes, 1);
}

struct Chunk {
  int64_t id = 0;  // 0 until stored
  ContentHash hash{};
  uint64_t size = 0;
};

// Appends to `chunks` those of `tail` cut from its offset 0, with their
// hashes `tail_hashes` (Sha256OfChunks(tail), or what an AddressedContent
// computed of those bytes), not stored yet.
void AppendTailChunks(std::vector<Chunk>& chunks, std::string_view tail, const std::vector<ContentHash>& tail_hashes) {
  for (size_t index = 0; index < tail_hashes.size(); ++index) {
    chunks.push_back(Chunk{0, tail_hashes[index], tail.substr(index * kChunkBytes, kChunkBytes).size()});
  }
}

// Stores chunked content of `size` bytes from `chunks`, whose first
// `stored` already exist (their ids are set; the new list takes one more
// reference on each) and the rest, hashed already (AppendTailChunks), are
// cut from `tail` in order. Returns the content's id, with one reference
// added.
Result<int64_t> PutChunkedContent(SqlConnection& db, std::vector<Chunk> chunks, size_t stored,
                                  std::string_view tail, uint64_t size) {
  std::vector<ContentHash> hashes;
  hashes.reserve(chunks.size());
  for (const Chunk& chunk : chunks) hashes.push_back(chunk.hash);
  const ContentHash whole = ChunkedContentHash(size, hashes);
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> existing, ReferenceExisting(db, whole));
  if (existing) return *existing;
  // A concurrent writer that stored the same content since the look above
  // makes the address's insert fail as a duplicate key: the transaction
  // runs again (engines with row locks retry it) and finds that content.
  TOOLVFS_ASSIGN_OR_RETURN(int64_t id, InsertNewContent(db, whole, size, std::nullopt, 1));
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i < stored) {
      TOOLVFS_RETURN_IF_ERROR(AddContentReference(db, chunks[i].id));
    } else {
      size_t offset = (i - stored) * kChunkBytes;
      TOOLVFS_ASSIGN_OR_RETURN(chunks[i].id,
                               PutWholeContent(db, tail.substr(offset, kChunkBytes), chunks[i].hash));
    }
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement link, db.Prepare(kInsertChunkLink));
    link.Bind(1, id).Bind(2, static_cast<int64_t>(i)).Bind(3, chunks[i].id);
    TOOLVFS_RETURN_IF_ERROR(link.Run());
  }
  return id;
}

Result<bool> IsChunked(SqlConnection& db, int64_t content_id) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement state, db.Prepare(kContentState));
  state.Bind(1, content_id);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, state.Step());
  if (!found) return MissingContentError(content_id);
  return state.Int(1) != 0;
}

Result<std::vector<Chunk>> ChunkList(SqlConnection& db, int64_t content_id) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement list, db.Prepare(kChunkList));
  list.Bind(1, content_id);
  std::vector<Chunk> chunks;
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, list.Step());
    if (!row) break;
    Chunk chunk;
    chunk.id = list.Int(0);
    TOOLVFS_ASSIGN_OR_RETURN(chunk.hash, AddressOf(list.Blob(1)));
    chunk.size = static_cast<uint64_t>(list.Int(2));
    chunks.push_back(chunk);
  }
  return chunks;
}

// Rewrites whole content `id` to `bytes` with address `hash` if it is
// stored whole with one reference; whether it did.
//
// Its old address's row would go and the new one's come: two pages of
// content_addresses, each a random one (the key is a SHA-256), for every
// overwrite of a file no snapshot sees. Without row locks (SQLite: one
// writer at a time) the old row is left instead when the content has no
// former address yet, and the content remembers it (`former_hash`): a
// page fewer per commit. Such a row is harmless: a content found by
// address is taken only if it still has that hash (ReferenceExisting), a
// new content with those bytes takes the row over (InsertAddress), and
// the row goes with its content (kDeleteAddress) or at garbage
// collection. So a content leaves at most one row behind: a second
// rewrite before then deletes the address it replaces, as with row locks.
Result<bool> RewriteSoleContent(SqlConnection& db, int64_t id, const ContentHash& hash, std::string_view bytes) {
  ContentHash old_hash{};
  std::optional<ContentHash> former;
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kSoleWholeContentAddress));
    select.Bind(1, id);
    TOOLVFS_ASSIGN_OR_RETURN(bool sole, select.Step());
    if (!sole) return false;
    TOOLVFS_ASSIGN_OR_RETURN(old_hash, AddressOf(select.Blob(0)));
    if (!select.IsNull(1)) {
      TOOLVFS_ASSIGN_OR_RETURN(former, AddressOf(select.Blob(1)));
    }
  }
  const bool leave_old_address = !db.dialect().row_locks && !former;
  std::optional<ContentHash> next_former = leave_old_address ? std::optional<ContentHash>(old_hash) : former;
  if (next_former == hash) next_former.reset();  // back to its former bytes: that row is its address again
  {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement rewrite, db.Prepare(kRewriteSoleContent));
    rewrite.Bind(1, id).BindBlob(2, HashBytes(hash)).Bind(3, static_cast<int64_t>(bytes.size())).BindBlob(4, bytes);
    if (next_former) {
      rewrite.BindBlob(5, HashBytes(*next_former));
    } else {
      rewrite.BindNull(5);
    }
    TOOLVFS_ASSIGN_OR_RETURN(bool rewritten, rewrite.Step());
    if (!rewritten) return false;
  }
  if (!leave_old_address) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement unaddress, db.Prepare(kDeleteAddressByHash));
    unaddress.BindBlob(1, HashBytes(old_hash));
    TOOLVFS_RETURN_IF_ERROR(unaddress.Run());
  }
  TOOLVFS_RETURN_IF_ERROR(InsertAddress(db, hash, id));
  return true;
}

}  // namespace

ContentHash ContentToWrite::WholeHash() const {
  return addressed_ != nullptr ? addressed_->address() : Sha256(bytes_);
}

std::vector<ContentHash> ContentToWrite::ChunkHashes() const {
  return addressed_ != nullptr ? addressed_->chunk_hashes() : Sha256OfChunks(bytes_);
}

Result<int64_t> ExchangeContent(SqlConnection& db, int64_t old, const ContentToWrite& content) {
  const std::string_view bytes = content.bytes();
  int64_t id = 0;
  if (bytes.size() <= kChunkBytes) {
    const ContentHash hash = content.WholeHash();
    TOOLVFS_ASSIGN_OR_RETURN(std::optional<int64_t> existing, ReferenceExisting(db, hash));
    if (!existing) {
      TOOLVFS_ASSIGN_OR_RETURN(bool rewritten, RewriteSoleContent(db, old, hash, bytes));
      if (rewritten) return old;
      TOOLVFS_ASSIGN_OR_RETURN(existing, InsertNewContent(db, hash, bytes.size(), bytes, 1));
    }
    id = *existing;
  } else {
    TOOLVFS_ASSIGN_OR_RETURN(id, PutContent(db, content));
  }
  TOOLVFS_RETURN_IF_ERROR(ReleaseContent(db, old));
  return id;
}

Result<ContentHash> StoredContentAddress(SqlConnection& db, int64_t content_id) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement select, db.Prepare(kContentAddress));
  select.Bind(1, content_id);
  TOOLVFS_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return MissingContentError(content_id);
  return AddressOf(select.Blob(0));
}

Result<int64_t> PutContent(SqlConnection& db, const ContentToWrite& content) {
  const std::string_view bytes = content.bytes();
  if (bytes.size() <= kChunkBytes) return PutWholeContent(db, bytes, content.WholeHash());
  std::vector<Chunk> chunks;
  AppendTailChunks(chunks, bytes, content.ChunkHashes());
  return PutChunkedContent(db, std::move(chunks), 0, bytes, bytes.size());
}

Result<std::string> ReadContent(SqlConnection& db, int64_t content_id, uint64_t size, uint64_t offset,
                                uint64_t length) {
  if (length == 0) return std::string();
  if (size <= kChunkBytes) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement read, db.Prepare(kInlineContent));
    read.Bind(1, content_id);
    TOOLVFS_ASSIGN_OR_RETURN(bool found, read.Step());
    std::string_view data = found ? read.Blob(0) : std::string_view();
    if (!found || data.size() != size) {
      return InternalError("Content " + std::to_string(content_id) + " of the store is damaged");
    }
    return std::string(data.substr(offset, length));
  }
  const uint64_t first = offset / kChunkBytes;
  const uint64_t last = (offset + length - 1) / kChunkBytes;
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement read, db.Prepare(kChunkData));
  read.Bind(1, content_id).Bind(2, static_cast<int64_t>(first)).Bind(3, static_cast<int64_t>(last));
  std::string bytes;
  bytes.reserve(length);
  uint64_t chunk_start = first * kChunkBytes;
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) break;
    std::string_view data = read.Blob(0);
    uint64_t from = offset > chunk_start ? offset - chunk_start : 0;
    uint64_t wanted = length - bytes.size();
    if (from < data.size()) bytes.append(data.substr(from, wanted));
    chunk_start += kChunkBytes;
  }
  if (bytes.size() != length) {
    return InternalError("Content " + std::to_string(content_id) + " of the store is damaged");
  }
  return bytes;
}

Result<int64_t> AppendContent(SqlConnection& db, int64_t old, uint64_t old_size, std::string_view extra) {
  TOOLVFS_ASSIGN_OR_RETURN(bool chunked, IsChunked(db, old));
  if (!chunked) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string joined, ReadContent(db, old, old_size, 0, old_size));
    joined.append(extra);
    return PutContent(db, joined);
  }
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<Chunk> chunks, ChunkList(db, old));
  std::string tail;
  if (!chunks.empty() && chunks.back().size < kChunkBytes) {
    const Chunk& last = chunks.back();
    TOOLVFS_ASSIGN_OR_RETURN(tail, ReadContent(db, last.id, last.size, 0, last.size));
    chunks.pop_back();
  }
  tail.append(extra);
  const size_t stored = chunks.size();
  AppendTailChunks(chunks, tail, Sha256OfChunks(tail));
  return PutChunkedContent(db, std::move(chunks), stored, tail, old_size + extra.size());
}

Status ReleaseContent(SqlConnection& db, int64_t content_id) {
  int64_t references = 0;
  bool chunked = false;
  {
    // Counted down and read in one statement, which keeps the row locked
    // to the end of the transaction: a writer adding a reference now
    // waits, then finds the row gone and stores the content anew.
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement release, db.Prepare(kReleaseReference));
    release.Bind(1, content_id);
    TOOLVFS_ASSIGN_OR_RETURN(bool found, release.Step());
    if (!found) return MissingContentError(content_id);
    references = release.Int(0);
    chunked = release.Int(1) != 0;
  }
  if (references > 0) return OkStatus();
  if (chunked) {
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<Chunk> chunks, ChunkList(db, content_id));
    for (const Chunk& chunk : chunks) TOOLVFS_RETURN_IF_ERROR(ReleaseContent(db, chunk.id));
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement unlink, db.Prepare(kDeleteChunkLinks));
    unlink.Bind(1, content_id);
    TOOLVFS_RETURN_IF_ERROR(unlink.Run());
  }
  for (const char* sql : {kDeleteAddress, kDeleteContent}) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement remove, db.Prepare(sql));
    remove.Bind(1, content_id);
    TOOLVFS_RETURN_IF_ERROR(remove.Run());
  }
  return OkStatus();
}

Status AddContentReference(SqlConnection& db, int64_t content_id) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlStatement add, db.Prepare(kAddReferences));
  add.Bind(1, content_id).Bind(2, int64_t{1});
  return add.Run();
}

Status DeleteContent(SqlConnection& db, int64_t content_id) {
  // A chunk list's links are references its chunks counted: dropped with
  // the list, or a chunk another list shares would outlive that list too.
  for (const char* sql : {kReleaseListedChunks, kDeleteChunkLinks, kDeleteAddress, kDeleteContent}) {
    TOOLVFS_ASSIGN_OR_RETURN(SqlStatement remove, db.Prepare(sql));
    remove.Bind(1, content_id);
    TOOLVFS_RETURN_IF_ERROR(remove.Run());
  }
  return OkStatus();
}

}  // namespace toolvfs
