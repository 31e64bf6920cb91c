#include "project/sql/sqlite_wal_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

namespace toolvfs {
namespace {

// The WAL file format (sqlite.org/fileformat2.html, "The WAL File Format"):
// a 32-byte header whose bytes 8-11 give the page size, then frames of a
// 24-byte header and one page. Bytes 4-7 of a frame header are the size
// of the database after the commit for the frame that ends a commit, and 0
// for every other frame.
constexpr int64_t kWalHeaderBytes = 32;
constexpr int64_t kFrameHeaderBytes = 24;

// The WAL write lock: slot 0 of the WAL index's locks (WAL_WRITE_LOCK in
// SQLite's wal.c), taken and released on the database file's handle.
constexpr int kWalWriteLock = 0;

// Held bytes beyond this are written at once: a transaction that writes a
// large file does not hold it all in memory a second time.
constexpr size_t kMostBytesHeld = size_t{256} << 10;

// The most bytes handed to the default VFS in one write: it truncates a
// write's length to 17 bits (seekAndWriteFd in SQLite's os_unix.c, which
// never writes 128 KiB at once itself). One frame of 64 KiB fits.
constexpr size_t kMostBytesPerWrite = size_t{120} << 10;

// The name the VFS is registered under, and reports (NamingFileControl).
constexpr const char* kVfsName = "toolvfs-wal";

uint32_t BigEndian32(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

struct WalFile;

// What SQLite holds of a wrapped file: the object it calls the methods of,
// and the default VFS's file they go on to (in the memory that follows).
struct WrappedFile {
  sqlite3_file base;  // first: SQLite sees this object as a sqlite3_file
  sqlite3_file* real;
};

// A main database file and its WAL while that is open. A database file and
// its WAL belong to one connection, used by one thread at a time.
struct DatabaseFile {
  WrappedFile file;       // first
  const char* name;       // SQLite's name for it, which its WAL's name leads back to
  WalFile* wal = nullptr;
  bool write_locked = false;  // this connection holds the WAL write lock
};

// A WAL file: the default VFS's file and the bytes appended to it and not
// yet written.
struct WalFile {
  WrappedFile file;                  // first
  DatabaseFile* database = nullptr;  // nullptr: not known, so nothing is held
  std::string held;                  // bytes [held_offset, held_offset + held.size()) of the file
  int64_t held_offset = 0;
  int64_t page_size = 0;     // from the WAL header; 0 until known
  int64_t written_end = -1;  // past the furthest byte written under this write lock; -1: none yet
};

constexpr size_t kRealFileOffset = (std::max(sizeof(DatabaseFile), sizeof(WalFile)) + 15) / 16 * 16;

sqlite3_file* RealFileIn(sqlite3_file* file) {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealFileOffset);
}
sqlite3_file* Real(sqlite3_file* file) { return reinterpret_cast<WrappedFile*>(file)->real; }
sqlite3_file* Real(WalFile& wal) { return wal.file.real; }
WalFile& AsWal(sqlite3_file* file) { return *reinterpret_cast<WalFile*>(file); }
DatabaseFile& AsDatabase(sqlite3_file* file) { return *reinterpret_cast<DatabaseFile*>(file); }

// The open database files by SQLite's name for them (a pointer: each
// connection's pager has a name of its own), so that a WAL finds its
// database (sqlite3_filename_database gives that pointer back).
std::mutex& OpenDatabasesMutex() {
  static std::mutex mutex;
  return mutex;
}
std::unordered_map<const char*, DatabaseFile*>& OpenDatabases() {
  static auto* databases = new std::unordered_map<const char*, DatabaseFile*>();  // never destroyed: used at exit
  return *databases;
}

// ----- Holding and writing WAL bytes ----------------------------------------------

int WriteHeld(WalFile& wal) {
  int code = SQLITE_OK;
  for (size_t done = 0; done < wal.held.size() && code == SQLITE_OK; done += kMostBytesPerWrite) {
    const size_t size = std::min(kMostBytesPerWrite, wal.held.size() - done);
    code = Real(wal)->pMethods->xWrite(Real(wal), wal.held.data() + done, static_cast<int>(size),
                                      wal.held_offset + static_cast<int64_t>(done));
  }
  // Whether or not they were written, the bytes are SQLite's to write
  // again: a failed write fails the commit, and SQLite rewrites its frames.
  wal.held.clear();
  return code;
}

// Learns the page size from the WAL header, held or on disk. False if the
// header cannot be read or is not a WAL header's.
bool KnowPageSize(WalFile& wal) {
  if (wal.page_size != 0) return true;
  char header[kWalHeaderBytes];
  if (wal.held_offset == 0 && wal.held.size() >= kWalHeaderBytes) {
    std::copy_n(wal.held.data(), kWalHeaderBytes, header);
  } else if (Real(wal)->pMethods->xRead(Real(wal), header, kWalHeaderBytes, 0) != SQLITE_OK) {
    return false;
  }
  const int64_t page_size = BigEndian32(header + 8);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) return false;
  wal.page_size = page_size;
  return true;
}

// After bytes [appended_from, end of held) were appended: writes the held
// bytes if they complete a commit's last frame, or if that cannot be told
// (a frame whose header was written already, an unknown page size).
int WriteIfCommitted(WalFile& wal, int64_t appended_from) {
  if (wal.held.size() >= kMostBytesHeld) return WriteHeld(wal);
  const int64_t held_end = wal.held_offset + static_cast<int64_t>(wal.held.size());
  if (held_end <= kWalHeaderBytes) return SQLITE_OK;  // the WAL header alone
  if (!KnowPageSize(wal)) return WriteHeld(wal);
  const int64_t frame_bytes = kFrameHeaderBytes + wal.page_size;
  // Every frame that ends within the appended bytes.
  int64_t frame = std::max<int64_t>(0, (appended_from - kWalHeaderBytes) / frame_bytes);
  for (;; ++frame) {
    const int64_t header = kWalHeaderBytes + frame * frame_bytes;
    const int64_t end = header + frame_bytes;
    if (end > held_end) return SQLITE_OK;
    if (end <= appended_from) continue;
    if (header < wal.held_offset) return WriteHeld(wal);
    const char* commit_size = wal.held.data() + (header - wal.held_offset) + 4;
    if (BigEndian32(commit_size) != 0) return WriteHeld(wal);
  }
}

// Called when the connection takes or gives up the write lock: whatever is
// still held then belongs to no commit (a commit's frames went out with
// its last one), so a failure to write it is no one's to hear of.
void EndOfWriteLock(DatabaseFile& database) {
  if (database.wal == nullptr) return;
  WriteHeld(*database.wal);
  database.wal->written_end = -1;
}

// ----- Methods that only pass the call on to the default VFS's file -------------

int ForwardRead(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  return Real(file)->pMethods->xRead(Real(file), buffer, amount, offset);
}
int ForwardWrite(sqlite3_file* file, const void* bytes, int amount, sqlite3_int64 offset) {
  return Real(file)->pMethods->xWrite(Real(file), bytes, amount, offset);
}
int ForwardTruncate(sqlite3_file* file, sqlite3_int64 size) {
  return Real(file)->pMethods->xTruncate(Real(file), size);
}
int ForwardSync(sqlite3_file* file, int flags) { return Real(file)->pMethods->xSync(Real(file), flags); }
int ForwardFileSize(sqlite3_file* file, sqlite3_int64* size) {
  return Real(file)->pMethods->xFileSize(Real(file), size);
}
int ForwardLock(sqlite3_file* file, int level) { return Real(file)->pMethods->xLock(Real(file), level); }
int ForwardUnlock(sqlite3_file* file, int level) { return Real(file)->pMethods->xUnlock(Real(file), level); }
int ForwardCheckReservedLock(sqlite3_file* file, int* reserved) {
  return Real(file)->pMethods->xCheckReservedLock(Real(file), reserved);
}
int ForwardFileControl(sqlite3_file* file, int operation, void* argument) {
  return Real(file)->pMethods->xFileControl(Real(file), operation, argument);
}

// The file controls of a wrapped file: the default VFS's, except that
// SQLITE_FCNTL_VFSNAME names this VFS too. Its contract (sqlite3.h): the
// names of every VFS of the stack, shims first, "/" between them, in
// memory from sqlite3_malloc that the caller frees; so "toolvfs-wal/unix",
// as SQLite's own shims (vfstrace, multiplex) prefix theirs. Passed on
// first so that the default VFS writes its name (and frees nothing).
int NamingFileControl(sqlite3_file* file, int operation, void* argument) {
  int code = ForwardFileControl(file, operation, argument);
  if (operation != SQLITE_FCNTL_VFSNAME) return code;
  char*& names = *static_cast<char**>(argument);
  const std::string below = code == SQLITE_OK && names != nullptr ? names : "";
  const std::string stack = below.empty() ? std::string(kVfsName) : std::string(kVfsName) + "/" + below;
  auto* copy = static_cast<char*>(sqlite3_malloc64(stack.size() + 1));
  if (copy == nullptr) return SQLITE_NOMEM;  // `names`, if any, is still the caller's to free
  std::memcpy(copy, stack.c_str(), stack.size() + 1);
  sqlite3_free(names);
  names = copy;
  return SQLITE_OK;
}
int ForwardSectorSize(sqlite3_file* file) { return Real(file)->pMethods->xSectorSize(Real(file)); }
int ForwardDeviceCharacteristics(sqlite3_file* file) {
  return Real(file)->pMethods->xDeviceCharacteristics(Real(file));
}
int ForwardShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** memory) {
  return Real(file)->pMethods->xShmMap(Real(file), region, size, extend, memory);
}
int ForwardFetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** memory) {
  return Real(file)->pMethods->xFetch(Real(file), offset, amount, memory);
}
int ForwardUnfetch(sqlite3_file* file, sqlite3_int64 offset, void* memory) {
  return Real(file)->pMethods->xUnfetch(Real(file), offset, memory);
}

// ----- The WAL file's methods -------------------------------------------------

int WalClose(sqlite3_file* file) {
  WalFile& wal = AsWal(file);
  int written = WriteHeld(wal);
  {
    std::lock_guard<std::mutex> lock(OpenDatabasesMutex());
    if (wal.database != nullptr) wal.database->wal = nullptr;
  }
  int closed = Real(wal)->pMethods->xClose(Real(wal));
  wal.~WalFile();
  return written != SQLITE_OK ? written : closed;
}

int WalWrite(sqlite3_file* file, const void* bytes, int amount, sqlite3_int64 offset) {
  WalFile& wal = AsWal(file);
  // An append goes past everything written under this write lock; any
  // other write (a frame rewritten in place, its checksums) goes out now.
  const bool append = wal.written_end < 0 || offset >= wal.written_end;
  wal.written_end = std::max<int64_t>(wal.written_end, offset + amount);
  const bool may_hold = append && wal.database != nullptr && wal.database->write_locked;
  if (!wal.held.empty() && (!may_hold || offset != wal.held_offset + static_cast<int64_t>(wal.held.size()))) {
    if (int code = WriteHeld(wal); code != SQLITE_OK) return code;
  }
  if (offset == 0) wal.page_size = 0;  // a new WAL header: read it again
  if (!may_hold) return Real(wal)->pMethods->xWrite(Real(wal), bytes, amount, offset);
  if (wal.held.empty()) wal.held_offset = offset;
  wal.held.append(static_cast<const char*>(bytes), static_cast<size_t>(amount));
  return WriteIfCommitted(wal, offset);
}

// A method that passes the call on once the held bytes are written (a
// failure to write them is its answer).
template <auto kForward>
struct AfterHeld;
template <typename... Arguments, int (*kForward)(sqlite3_file*, Arguments...)>
struct AfterHeld<kForward> {
  static int Call(sqlite3_file* file, Arguments... arguments) {
    if (int code = WriteHeld(AsWal(file)); code != SQLITE_OK) return code;
    return kForward(file, arguments...);
  }
};

// Version 1: SQLite neither maps nor shares memory through a WAL file.
constexpr sqlite3_io_methods kWalMethods = {
    .iVersion = 1,
    .xClose = WalClose,
    .xRead = AfterHeld<ForwardRead>::Call,
    .xWrite = WalWrite,
    .xTruncate = AfterHeld<ForwardTruncate>::Call,
    .xSync = AfterHeld<ForwardSync>::Call,
    .xFileSize = AfterHeld<ForwardFileSize>::Call,
    .xLock = ForwardLock,
    .xUnlock = ForwardUnlock,
    .xCheckReservedLock = ForwardCheckReservedLock,
    .xFileControl = AfterHeld<NamingFileControl>::Call,
    .xSectorSize = ForwardSectorSize,
    .xDeviceCharacteristics = ForwardDeviceCharacteristics,
    .xShmMap = nullptr,
    .xShmLock = nullptr,
    .xShmBarrier = nullptr,
    .xShmUnmap = nullptr,
    .xFetch = nullptr,
    .xUnfetch = nullptr,
};

// ----- The database file's methods: the default VFS's, watching the WAL locks ---------

int DatabaseClose(sqlite3_file* file) {
  DatabaseFile& database = AsDatabase(file);
  {
    std::lock_guard<std::mutex> lock(OpenDatabasesMutex());
    if (database.name != nullptr) OpenDatabases().erase(database.name);
    if (database.wal != nullptr) database.wal->database = nullptr;
  }
  int closed = Real(file)->pMethods->xClose(Real(file));
  database.~DatabaseFile();
  return closed;
}

// The write lock's edges: held bytes go out before the lock is given up
// (frames of a transaction that rolled back must not land later over
// another writer's), and appends are counted from the lock's taking.
int DatabaseShmLock(sqlite3_file* file, int offset, int count, int flags) {
  DatabaseFile& database = AsDatabase(file);
  const bool write_lock = (flags & SQLITE_SHM_EXCLUSIVE) != 0 && offset <= kWalWriteLock &&
                          kWalWriteLock < offset + count;
  if (write_lock && (flags & SQLITE_SHM_UNLOCK) != 0) {
    EndOfWriteLock(database);
    database.write_locked = false;
  }
  int code = Real(file)->pMethods->xShmLock(Real(file), offset, count, flags);
  if (write_lock && (flags & SQLITE_SHM_LOCK) != 0 && code == SQLITE_OK) {
    EndOfWriteLock(database);
    database.write_locked = true;
  }
  return code;
}

// SQLite publishes a commit in the WAL index around this barrier: nothing
// may be held then (the commit's frames went out with its last one); if
// anything is, it goes out first.
void DatabaseShmBarrier(sqlite3_file* file) {
  DatabaseFile& database = AsDatabase(file);
  if (database.wal != nullptr) WriteHeld(*database.wal);
  Real(file)->pMethods->xShmBarrier(Real(file));
}

int DatabaseShmUnmap(sqlite3_file* file, int delete_flag) {
  DatabaseFile& database = AsDatabase(file);
  if (database.wal != nullptr) WriteHeld(*database.wal);
  return Real(file)->pMethods->xShmUnmap(Real(file), delete_flag);
}
constexpr sqlite3_io_methods kDatabaseMethods = {
    .iVersion = 3,
    .xClose = DatabaseClose,
    .xRead = ForwardRead,
    .xWrite = ForwardWrite,
    .xTruncate = ForwardTruncate,
    .xSync = ForwardSync,
    .xFileSize = ForwardFileSize,
    .xLock = ForwardLock,
    .xUnlock = ForwardUnlock,
    .xCheckReservedLock = ForwardCheckReservedLock,
    .xFileControl = NamingFileControl,
    .xSectorSize = ForwardSectorSize,
    .xDeviceCharacteristics = ForwardDeviceCharacteristics,
    .xShmMap = ForwardShmMap,
    .xShmLock = DatabaseShmLock,
    .xShmBarrier = DatabaseShmBarrier,
    .xShmUnmap = DatabaseShmUnmap,
    .xFetch = ForwardFetch,
    .xUnfetch = ForwardUnfetch,
};

// ----- The VFS: its own xOpen, the rest the default VFS's ----------------------

sqlite3_vfs* Base(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

// A main database file and its WAL are wrapped; every other file (a
// temporary one, a rollback journal) is the default VFS's file, opened in
// place, whose methods SQLite calls directly.
int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  sqlite3_vfs* base = Base(vfs);
  const bool database = (flags & SQLITE_OPEN_MAIN_DB) != 0 && name != nullptr;
  const bool wal = (flags & SQLITE_OPEN_WAL) != 0;
  if (!database && !wal) return base->xOpen(base, name, file, flags, out_flags);
  sqlite3_file* real = RealFileIn(file);
  real->pMethods = nullptr;
  int code = base->xOpen(base, name, real, flags, out_flags);
  if (code == SQLITE_OK && real->pMethods->iVersion < kDatabaseMethods.iVersion) {
    // A default VFS older than ours: its files go unwrapped.
    real->pMethods->xClose(real);
    return base->xOpen(base, name, file, flags, out_flags);
  }
  if (code != SQLITE_OK) {
    if (real->pMethods != nullptr) real->pMethods->xClose(real);
    file->pMethods = nullptr;
    return code;
  }
  std::lock_guard<std::mutex> lock(OpenDatabasesMutex());
  if (database) {
    DatabaseFile* opened = new (file) DatabaseFile{{{&kDatabaseMethods}, real}, name};
    OpenDatabases()[name] = opened;
    return SQLITE_OK;
  }
  WalFile* opened = new (file) WalFile{{{&kWalMethods}, real}};
  auto found = OpenDatabases().find(sqlite3_filename_database(name));
  if (found != OpenDatabases().end()) {
    opened->database = found->second;
    found->second->wal = opened;
  }
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_directory) {
  return Base(vfs)->xDelete(Base(vfs), name, sync_directory);
}
int Access(sqlite3_vfs* vfs, const char* name, int flags, int* result) {
  return Base(vfs)->xAccess(Base(vfs), name, flags, result);
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
  return Base(vfs)->xFullPathname(Base(vfs), name, size, out);
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) { return Base(vfs)->xDlOpen(Base(vfs), name); }
void DlError(sqlite3_vfs* vfs, int size, char* message) { Base(vfs)->xDlError(Base(vfs), size, message); }
void (*DlSym(sqlite3_vfs* vfs, void* library, const char* symbol))(void) {
  return Base(vfs)->xDlSym(Base(vfs), library, symbol);
}
void DlClose(sqlite3_vfs* vfs, void* library) { Base(vfs)->xDlClose(Base(vfs), library); }
int Randomness(sqlite3_vfs* vfs, int size, char* out) { return Base(vfs)->xRandomness(Base(vfs), size, out); }
int Sleep(sqlite3_vfs* vfs, int microseconds) { return Base(vfs)->xSleep(Base(vfs), microseconds); }
int CurrentTime(sqlite3_vfs* vfs, double* now) { return Base(vfs)->xCurrentTime(Base(vfs), now); }
int GetLastError(sqlite3_vfs* vfs, int size, char* out) { return Base(vfs)->xGetLastError(Base(vfs), size, out); }
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* now) {
  return Base(vfs)->xCurrentTimeInt64(Base(vfs), now);
}
int SetSystemCall(sqlite3_vfs* vfs, const char* name, sqlite3_syscall_ptr call) {
  return Base(vfs)->xSetSystemCall(Base(vfs), name, call);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs* vfs, const char* name) {
  return Base(vfs)->xGetSystemCall(Base(vfs), name);
}
const char* NextSystemCall(sqlite3_vfs* vfs, const char* name) {
  return Base(vfs)->xNextSystemCall(Base(vfs), name);
}

}  // namespace

const char* SqliteWalVfsName() {
  static const char* const name = []() -> const char* {
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (base == nullptr || base->iVersion < 1) return nullptr;
    static sqlite3_vfs vfs{};
    vfs.iVersion = std::min(base->iVersion, 3);
    vfs.szOsFile = static_cast<int>(kRealFileOffset) + base->szOsFile;
    vfs.mxPathname = base->mxPathname;
    vfs.zName = kVfsName;
    vfs.pAppData = base;
    vfs.xOpen = Open;
    vfs.xDelete = Delete;
    vfs.xAccess = Access;
    vfs.xFullPathname = FullPathname;
    vfs.xDlOpen = base->xDlOpen != nullptr ? DlOpen : nullptr;
    vfs.xDlError = base->xDlError != nullptr ? DlError : nullptr;
    vfs.xDlSym = base->xDlSym != nullptr ? DlSym : nullptr;
    vfs.xDlClose = base->xDlClose != nullptr ? DlClose : nullptr;
    vfs.xRandomness = Randomness;
    vfs.xSleep = Sleep;
    vfs.xCurrentTime = CurrentTime;
    vfs.xGetLastError = base->xGetLastError != nullptr ? GetLastError : nullptr;
    if (vfs.iVersion >= 2) vfs.xCurrentTimeInt64 = base->xCurrentTimeInt64 != nullptr ? CurrentTimeInt64 : nullptr;
    if (vfs.iVersion >= 3) {
      vfs.xSetSystemCall = base->xSetSystemCall != nullptr ? SetSystemCall : nullptr;
      vfs.xGetSystemCall = base->xGetSystemCall != nullptr ? GetSystemCall : nullptr;
      vfs.xNextSystemCall = base->xNextSystemCall != nullptr ? NextSystemCall : nullptr;
    }
    return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK ? vfs.zName : nullptr;
  }();
  return name;
}

}  // namespace toolvfs
