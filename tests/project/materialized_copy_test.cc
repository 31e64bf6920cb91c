// Reading a materialized copy back (materialized_copy.h): the walk holds no
// file's content, a file is read again only to be applied and must still be
// what the walk saw, and a sync of several large files holds one of them at
// a time, for the SQL stores and the memory store alike.
#include "project/materialized_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/status.h"
#include "core/unique_fd.h"
#include "project/content/content_hash.h"
#include "project/memory_store.h"
#include "project/project_files.h"
#include "project/status_assertions.h"
#include "project/test_util.h"

namespace toolvfs {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(ContentAddressBuilderTest, MatchesContentAddressWhateverThePieces) {
  std::string bytes(3 * kChunkBytes + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) % 251);
  for (size_t size : {size_t{0}, size_t{1}, size_t{kChunkBytes - 1}, size_t{kChunkBytes}, size_t{kChunkBytes + 1},
                      size_t{2 * kChunkBytes}, bytes.size()}) {
    const std::string_view content = std::string_view(bytes).substr(0, size);
    for (size_t piece : {size_t{1000}, size_t{kChunkBytes}, size_t{kChunkBytes + 7}}) {
      ContentAddressBuilder builder;
      for (size_t offset = 0; offset < content.size(); offset += piece) builder.Append(content.substr(offset, piece));
      EXPECT_EQ(builder.Finish(), ContentAddress(content)) << size << " bytes in pieces of " << piece;
    }
  }
}

// An AddressedContent's address is always its bytes' ContentAddress, made
// of the chunk hashes it hands a store: no one can pair bytes with
// another content's address through it.
TEST(AddressedContentTest, CarriesTheAddressAndChunkHashesOfItsOwnBytes) {
  for (size_t size : {size_t{0}, size_t{5}, size_t{kChunkBytes}, size_t{kChunkBytes + 1}, size_t{3 * kChunkBytes}}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7) % 253);
    const AddressedContent content(bytes);
    EXPECT_EQ(content.bytes(), bytes) << size;
    EXPECT_EQ(content.address(), ContentAddress(bytes)) << size;
    if (size <= kChunkBytes) {
      EXPECT_TRUE(content.chunk_hashes().empty()) << size;
    } else {
      EXPECT_EQ(content.chunk_hashes(), Sha256OfChunks(bytes)) << size;
      EXPECT_EQ(ChunkedContentHash(size, content.chunk_hashes()), content.address()) << size;
    }
  }
}

TEST(ReadCopyTest, RecordsSizesAndAddressesWithoutContent) {
  TempDir copy;
  const std::string large(kChunkBytes * 2 + 5, 'x');
  WriteRealFile(copy.Join("small.txt"), "small");
  WriteRealFile(copy.Join("dir/large.bin"), large);
  Result<CopiedTree> addressed = ReadCopy(copy.path(), CopiedAddresses::kCompute);
  ASSERT_TRUE(IsOk(addressed));
  ASSERT_EQ(addressed->size(), 3u);
  EXPECT_EQ(addressed->at("dir").kind, EntryKind::kDirectory);
  const CopiedEntry& entry = addressed->at("dir/large.bin");
  EXPECT_EQ(entry.size, large.size());
  ASSERT_TRUE(entry.address.has_value());
  EXPECT_EQ(*entry.address, ContentAddress(large));
  EXPECT_EQ(*addressed->at("small.txt").address, ContentAddress("small"));
  Result<std::string> read = ReadCopiedFile(copy.path(), "dir/large.bin", entry);
  ASSERT_TRUE(IsOk(read));
  EXPECT_EQ(*read, large);

  Result<CopiedTree> sized = ReadCopy(copy.path(), CopiedAddresses::kSkip);
  ASSERT_TRUE(IsOk(sized));
  EXPECT_EQ(sized->at("dir/large.bin").size, large.size());
  EXPECT_FALSE(sized->at("dir/large.bin").address.has_value());
}

// What the walk saw is what is applied: a file changed, replaced or moved
// behind a symlink since fails the read with Changed, naming it.
TEST(ReadCopyTest, AFileThatChangedSinceTheWalkIsRefused) {
  TempDir copy;
  WriteRealFile(copy.Join("same_size.txt"), "before");
  WriteRealFile(copy.Join("grown.txt"), "before");
  WriteRealFile(copy.Join("dir/linked.txt"), "before");
  WriteRealFile(copy.Join("fifo"), "before");
  Result<CopiedTree> tree = ReadCopy(copy.path(), CopiedAddresses::kCompute);
  ASSERT_TRUE(IsOk(tree));
  WriteRealFile(copy.Join("same_size.txt"), "after!");
  WriteRealFile(copy.Join("grown.txt"), "before and after");
  TempDir elsewhere;
  WriteRealFile(elsewhere.Join("linked.txt"), "before");
  TempDir::RemoveAll(copy.Join("dir"));
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), copy.Join("dir").c_str()), 0);
  ASSERT_EQ(::unlink(copy.Join("fifo").c_str()), 0);
  ASSERT_EQ(::mkfifo(copy.Join("fifo").c_str(), 0600), 0);
  for (const char* path : {"same_size.txt", "grown.txt", "dir/linked.txt", "fifo"}) {
    Result<AddressedContent> addressed = ReadAddressedCopiedFile(copy.path(), path, tree->at(path));
    ASSERT_FALSE(addressed.ok()) << path;
    EXPECT_EQ(addressed.status().code(), StatusCode::kChanged) << addressed.status().ToString();
    Result<std::string> read = ReadCopiedFile(copy.path(), path, tree->at(path));
    ASSERT_FALSE(read.ok()) << path;
    EXPECT_EQ(read.status().code(), StatusCode::kChanged) << read.status().ToString();
    EXPECT_NE(read.status().message().find(copy.Join(path)), std::string::npos) << read.status().ToString();
    EXPECT_NE(read.status().message().find("the copy changed while it was synced"), std::string::npos)
        << read.status().ToString();
  }
}

TEST(ReadCopyTest, TheTotalOfOneSyncIsCapped) {
  EXPECT_TRUE(IsOk(CheckSyncedTotal(kMaxSyncedTotalBytes)));
  Status over = CheckSyncedTotal(kMaxSyncedTotalBytes + 1);
  EXPECT_EQ(over.code(), StatusCode::kTooLarge);
  EXPECT_EQ(over.message(),
            "the files changed in it come to more than 8 GiB, the limit for one sync back into a store");
}

// ----- Hash passes of a sync ---------------------------------------------------

// The sync-back hashes a changed file twice: in the walk, which finds what
// changed, and when it reads it again to apply it (the check that it is
// still what the walk saw); the store's write takes that address along
// instead of hashing the bytes a third time. An unchanged file is hashed
// once, by the walk. Every write path of the store is taken: a new file, an
// overwrite of a file a snapshot sees (whole and chunked) and one in place.
TEST(SyncBackHashingTest, ASqliteSyncHashesAChangedFileTwiceAndAnUnchangedOneOnce) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject("sqlite:" + dir.Join("store.db") + "#w");
  ASSERT_TRUE(IsOk(store));
  ProjectFiles& files = **store;
  const std::string unchanged(1000, 'u');
  ASSERT_TRUE(IsOk(files.Write("unchanged.txt", unchanged)));
  ASSERT_TRUE(IsOk(files.Write("seen.txt", "seen by the snapshot")));
  ASSERT_TRUE(IsOk(files.Write("seen.bin", std::string(2 * kChunkBytes, 's'))));
  ASSERT_TRUE(IsOk(files.Snapshot()));
  ASSERT_TRUE(IsOk(files.Write("fresh.txt", "written after the snapshot")));
  Result<std::unique_ptr<MaterializedView>> view = files.Materialize();
  ASSERT_TRUE(IsOk(view));
  const std::map<std::string, std::string> changed = {
      {"seen.txt", "changed, whole"},
      {"seen.bin", std::string(3 * kChunkBytes + 5, 'c')},
      {"fresh.txt", "changed in place"},
      {"new/large.bin", std::string(2 * kChunkBytes + 1, 'n')},
  };
  uint64_t changed_bytes = 0;
  for (const auto& [path, content] : changed) {
    WriteRealFile((*view)->path() + "/" + path, content);
    changed_bytes += content.size();
  }
  const uint64_t before = Sha256BytesHashed();
  ASSERT_TRUE(IsOk((*view)->Release()));
  EXPECT_EQ(Sha256BytesHashed() - before, 2 * changed_bytes + unchanged.size());
  for (const auto& [path, content] : changed) {
    Result<std::string> read = files.Read(path);
    ASSERT_TRUE(IsOk(read)) << path;
    EXPECT_EQ(*read, content) << path;
  }
  EXPECT_EQ(*files.Read("unchanged.txt"), unchanged);
}

// ----- Peak memory of a sync ---------------------------------------------------

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS").
std::optional<uint64_t> StatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(field + ":")) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return std::nullopt;
}

// Resets this process's peak RSS (VmHWM) to its current RSS (Linux 4.0),
// so that what the test allocated before does not hide what comes after.
bool ResetPeakRss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return clear_refs.good();
}

// A sparse file of `size` bytes: no disk, but reading it fills memory.
void MakeSparseFile(const std::string& path, uint64_t size) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(size)), 0);
}

// How much the peak RSS grows while `view` is released.
std::optional<uint64_t> PeakGrowthOfRelease(MaterializedView& view) {
  if (!ResetPeakRss()) return std::nullopt;
  std::optional<uint64_t> before = StatusBytes("VmRSS");
  Status released = view.Release();
  EXPECT_TRUE(IsOk(released));
  std::optional<uint64_t> peak = StatusBytes("VmHWM");
  if (!before || !peak) return std::nullopt;
  return *peak > *before ? *peak - *before : 0;
}

// The reviewer's case: a tool leaves four large new files (sparse here) in
// a sqlite workspace's copy. The sync reads each only to write it, so the
// host holds about one file, where it held all four (800 MiB) before.
TEST(SyncBackMemoryTest, ASqliteSyncHoldsOneNewFileAtATime) {
  TempDir dir;
  Result<std::unique_ptr<ProjectFiles>> store = OpenProject("sqlite:" + dir.Join("store.db") + "#w");
  ASSERT_TRUE(IsOk(store));
  Result<std::unique_ptr<MaterializedView>> view = (*store)->Materialize();
  ASSERT_TRUE(IsOk(view));
  constexpr uint64_t kFileBytes = 200 * kMiB;
  for (const char* name : {"f1", "f2", "f3", "f4"}) MakeSparseFile((*view)->path() + "/" + name, kFileBytes);
  std::optional<uint64_t> growth = PeakGrowthOfRelease(**view);
  if (!growth) GTEST_SKIP() << "cannot reset or read the peak RSS in /proc/self (clear_refs)";
  std::printf("peak RSS growth of the sync: %llu MiB\n", static_cast<unsigned long long>(*growth / kMiB));
  EXPECT_LT(*growth, 2 * kFileBytes) << "the sync held more than one file at a time";
  Result<FileMetadata> synced = (*store)->Metadata("f4");
  ASSERT_TRUE(IsOk(synced));
  EXPECT_EQ(synced->size, kFileBytes);
}

// The memory store keeps what changed, but an unchanged file's bytes are
// read, compared and dropped one file at a time.
TEST(SyncBackMemoryTest, AMemorySyncHoldsOneUnchangedFileAtATime) {
  constexpr uint64_t kFileBytes = 64 * kMiB;  // over glibc's mmap threshold: freed pages leave the RSS
  std::unique_ptr<ProjectFiles> store = NewMemoryStore("m");
  for (const char* name : {"f1", "f2", "f3", "f4"}) {
    ASSERT_TRUE(IsOk(store->Write(name, std::string(kFileBytes, static_cast<char>(name[1])))));
  }
  Result<std::unique_ptr<MaterializedView>> view = store->Materialize();
  ASSERT_TRUE(IsOk(view));
  std::optional<uint64_t> growth = PeakGrowthOfRelease(**view);
  if (!growth) GTEST_SKIP() << "cannot reset or read the peak RSS in /proc/self (clear_refs)";
  std::printf("peak RSS growth of the sync: %llu MiB\n", static_cast<unsigned long long>(*growth / kMiB));
  EXPECT_LT(*growth, 2 * kFileBytes) << "the sync held more than one file at a time";
  EXPECT_EQ(store->ReadRange("f3", 0, 2)->content, "33");
}

}  // namespace
}  // namespace toolvfs
