// The fs.* methods (SPEC.md §4.3): each one checks its params, calls the
// ProjectFiles store and writes the result object. The store does the path
// checks and words its errors; this file only adds the protocol's view:
// parameter names, encodings, pagination and the wire shape of results.
#include <algorithm>
#include <initializer_list>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/io.h"
#include "core/text.h"
#include "host/methods.h"
#include "protocol/base64.h"
#include "protocol/grep_json.h"
#include "project/grep.h"
#include "project/path.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

// Where an access to `path` lands, for the policy: every symlink followed
// (`final_link` kFollow), or the parents' symlinks only, the entry itself
// being what is acted on (delete, rename, create).
enum class FinalLink { kFollow, kActOnLink };

Result<std::string> ResolveForPolicy(ProjectFiles& project, std::string_view path, FinalLink final_link) {
  if (final_link == FinalLink::kFollow) return project.ResolvePath(path);
  TOOLVFS_ASSIGN_OR_RETURN(std::string normalized, NormalizePath(path));
  if (normalized.empty()) return normalized;
  TOOLVFS_ASSIGN_OR_RETURN(std::string parent, project.ResolvePath(ParentPath(normalized)));
  return JoinPath(parent, BaseName(normalized));
}

// A project path as the user and the audit log see it: "." for the root.
std::string TargetOf(std::string_view resolved_path) {
  return resolved_path.empty() ? std::string(".") : std::string(resolved_path);
}

// One path a request acts on, as the policy judges it.
struct JudgedPath {
  std::string_view path;
  FileAccess access;
  FinalLink final_link = FinalLink::kFollow;
};

// Acts on exactly the objects the policy judged (SPEC.md §2.1: the check
// and the use happen on the same object). Resolves each path, asks the
// gate, then runs `act(store, resolved paths)` on the store's
// WithoutSymlinks() view, which refuses a symlink swapped in on the way
// since the check instead of following it; then everything is judged again
// (RetryWhileChanged). Without that, a racer could swap `src/a.txt` for a
// link to `.env`, or `src/d` for a link to `..`, between the two.
//
// Writing, deleting or renaming the root itself is left to the store, which
// refuses it with the precise reason (every store must: project_files.h),
// rather than reported as a policy denial of a request that cannot exist.
template <typename Act>
auto ActOnJudged(const MethodContext& context, RequestScope& scope, std::initializer_list<JudgedPath> paths,
                 Act&& act) -> decltype(act(context.project, std::vector<std::string>())) {
  using Answer = decltype(act(context.project, std::vector<std::string>()));
  return RetryWhileChanged([&]() -> Answer {
    std::vector<std::string> resolved;
    for (const JudgedPath& judged : paths) {
      TOOLVFS_ASSIGN_OR_RETURN(std::string one, ResolveForPolicy(context.project, judged.path, judged.final_link));
      if (judged.access != FileAccess::kWrite || !one.empty()) {
        TOOLVFS_RETURN_IF_ERROR(context.gate.Authorize(scope, FileAccessName(judged.access), TargetOf(one),
                                                       context.gate.policy().files.Check(judged.access, one)));
      }
      resolved.push_back(std::move(one));
    }
    return act(context.project.WithoutSymlinks(), resolved);
  });
}

// Before a directory is deleted or moved: everything in it must be
// writable too. The policy judges prefixes, but patterns that match at any
// depth (**/.env, **/*.key) can only be found by looking, so the tree is
// walked. Symlinks are entries, never followed: moving or deleting one
// leaves its target alone (and a cycle of them must not be walked
// forever). Uncovered entries pass: the directory's own decision stands
// for them. `resolved` is the entry itself, as ResolveForPolicy(kActOnLink)
// gave it.
Status AuthorizeTreeBelow(const MethodContext& context, RequestScope& scope, ProjectFiles& judged,
                          const std::string& resolved) {
  // A symlink (even to a directory) has nothing below it to move.
  TOOLVFS_ASSIGN_OR_RETURN(std::string followed, context.project.ResolvePath(resolved));
  if (followed != resolved) return OkStatus();
  Result<FileMetadata> metadata = judged.Metadata(resolved);
  if (!metadata.ok()) {
    // Nothing there, or nothing that can hold entries: the act itself
    // fails with the precise reason. Any other failure (an I/O error, a
    // timeout, Changed) says nothing about what is below, so the walk
    // cannot be skipped: the request fails, and acts on nothing unchecked.
    switch (metadata.status().code()) {
      case StatusCode::kNotFound:
      case StatusCode::kNoProject:
      case StatusCode::kNotDirectory:
      case StatusCode::kPermissionDenied:
      case StatusCode::kInvalidArgument: return OkStatus();
      default: return metadata.status();
    }
  }
  if (metadata->kind != EntryKind::kDirectory) return OkStatus();
  std::vector<std::string> directories = {resolved};
  while (!directories.empty()) {
    if (scope.cancelled()) return CancelledError(std::string(scope.method()) + " was cancelled while checking " +
                                                 DisplayPath(resolved));
    std::string directory = std::move(directories.back());
    directories.pop_back();
    TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, judged.ListDir(directory));
    for (const DirEntry& entry : entries) {
      std::string below = JoinPath(directory, entry.name);
      PolicyDecision decision = context.gate.policy().files.Check(FileAccess::kWrite, below);
      if (decision.decision == Decision::kDeny) {
        return context.gate.Authorize(scope, "write", TargetOf(below), decision);
      }
      if (entry.kind == EntryKind::kDirectory && !entry.is_symlink()) directories.push_back(std::move(below));
    }
  }
  return OkStatus();
}

// fs.read {path, offset?, length?} -> {content, size, encoding?}.
//
// Without a range the whole file is read with Read (the common case, one
// read of a size known up front); with offset or length, ReadRange. Content
// that is not valid UTF-8 (a binary file, or a range that splits a
// character) is sent as base64, since a JSON string can only carry text.
// The read limit is the store's or context.max_read_bytes, whichever is
// smaller (docs/protocol.md, "Size limits"); the error names which one.
Result<WireMessage> ServeRead(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "offset", "length"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> offset, params.OptionalUint("offset"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> length, params.OptionalUint("length"));

  // The store resolves once for the policy and the read (ReadAuthorized).
  std::optional<ProjectFiles::ByteRange> range;
  if (offset || length) range = ProjectFiles::ByteRange{offset.value_or(0), length};
  Result<FileRange> read = context.project.ReadAuthorized(path, range, [&](std::string_view resolved) {
    return context.gate.Authorize(scope, "read", TargetOf(resolved),
                                  context.gate.policy().files.Check(FileAccess::kRead, resolved));
  });
  if (!read.ok()) {
    Status status = std::move(read).status();
    if (status.code() != StatusCode::kTooLarge || range) return status;
    // ReadRange's limit error says this itself; a whole-file read is
    // where a tool first meets the limit, so it learns the way around.
    return Status(StatusCode::kTooLarge, status.message() + "; read it in parts with offset and length");
  }
  std::string content = std::move(read->content);
  uint64_t size = read->file_size;
  if (content.size() > context.max_read_bytes) {
    // Checked after the read: the store's limit already bounded it, and
    // only here are the bytes returned known (a range may end early).
    Result<std::string> normalized = NormalizePath(path);  // valid: the store read it
    const std::string shown = DisplayPath(normalized.ok() ? *normalized : std::string(path));
    return TooLargeError("Cannot read " + shown + ": " + FormatBytes(content.size()) +
                         (range ? " from offset " + std::to_string(range->offset) : std::string()) +
                         " is larger than the read limit of " + FormatBytes(context.max_read_bytes) +
                         " set by this tool's message limit (max_message_mb); read it in parts with "
                         "offset and length");
  }

  bool is_text = IsValidUtf8(content);
  if (!is_text) content = Base64Encode(content);
  return SerializeResult(
      request.id(),
      [&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "content");
        WriteJsonString(writer, content);
        WriteJsonKey(writer, "size");
        writer.Uint64(size);
        if (!is_text) {
          WriteJsonKey(writer, "encoding");
          WriteJsonString(writer, "base64");
        }
        writer.EndObject();
      },
      content.size() + 64);
}

// fs.write {path, content, encoding?, mode?} -> {size}: the bytes written,
// after base64 decoding.
Result<WireMessage> ServeWrite(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "content", "encoding", "mode"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view content, params.String("content"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string_view> encoding, params.OptionalString("encoding"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::string_view> mode_name, params.OptionalString("mode"));
  if (encoding && *encoding != "base64") {
    return InvalidArgumentError(
        "Invalid params: 'encoding' must be \"base64\" (or absent for UTF-8 text), got " +
        Quote(*encoding));
  }
  WriteMode mode = WriteMode::kOverwrite;
  if (mode_name) {
    TOOLVFS_ASSIGN_OR_RETURN(mode, ParseWriteMode(*mode_name));
  }
  // create never follows a final symlink; overwrite and append write
  // through it.
  FinalLink final_link = mode == WriteMode::kCreate ? FinalLink::kActOnLink : FinalLink::kFollow;

  // Text is written straight from the parsed message, without a copy.
  std::string decoded;
  if (encoding) {
    TOOLVFS_ASSIGN_OR_RETURN(decoded, Base64Decode(content));
    content = decoded;
  }
  TOOLVFS_RETURN_IF_ERROR(ActOnJudged(context, scope, {{path, FileAccess::kWrite, final_link}},
                                      [&](ProjectFiles& judged, const std::vector<std::string>& resolved) {
                                        return judged.Write(resolved[0], content, mode);
                                      }));
  return SerializeResult(request.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "size");
    writer.Uint64(content.size());
    writer.EndObject();
  });
}

// fs.exists {path} -> {exists}. An escaping path is an error, not false.
Result<WireMessage> ServeExists(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(bool exists, ActOnJudged(context, scope, {{path, FileAccess::kRead}},
                                                     [](ProjectFiles& judged, const std::vector<std::string>& resolved) {
                                                       return judged.Exists(resolved[0]);
                                                     }));
  return SerializeResult(request.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "exists");
    writer.Bool(exists);
    writer.EndObject();
  });
}

// fs.list_dir {path, offset?, limit?} -> {entries: [{path, kind}], total}.
//
// `total` counts every entry of the directory, so a tool paging with
// offset and limit knows when it is done; an offset past the end gives no
// entries, limit 0 none at all (only the total). Entries the tool may not
// read at all (denied or sensitive) are left out, so a listing reveals no
// more than reads would; they do not count in `total`. A symlink is judged
// by its own path and by where it leads: one to a denied or sensitive path
// is left out too.
Result<WireMessage> ServeListDir(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "offset", "limit"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> offset, params.OptionalUint("offset"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> limit, params.OptionalUint("limit"));
  std::string directory;
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries,
                           ActOnJudged(context, scope, {{path, FileAccess::kRead}},
                                       [&](ProjectFiles& judged, const std::vector<std::string>& resolved) {
                                         directory = resolved[0];
                                         return judged.ListDir(directory);
                                       }));
  const FilePolicy& files = context.gate.policy().files;
  auto denied = [&files](std::string_view entry_path) {
    return files.Check(FileAccess::kRead, entry_path).decision == Decision::kDeny;
  };
  std::erase_if(entries, [&](const DirEntry& entry) {
    return denied(JoinPath(directory, entry.name)) || (entry.link_target && denied(*entry.link_target));
  });

  uint64_t total = entries.size();
  uint64_t first = std::min(offset.value_or(0), total);
  uint64_t count = std::min(limit.value_or(total), total - first);
  size_t size_hint = 64;
  for (uint64_t i = first; i < first + count; ++i) size_hint += entries[i].name.size() + 32;
  return SerializeResult(
      request.id(),
      [&](JsonWriter& writer) {
        writer.StartObject();
        WriteJsonKey(writer, "entries");
        writer.StartArray();
        for (uint64_t i = first; i < first + count; ++i) {
          writer.StartObject();
          WriteJsonKey(writer, "path");
          WriteJsonString(writer, entries[i].name);
          WriteJsonKey(writer, "kind");
          WriteJsonString(writer, EntryKindName(entries[i].kind));
          writer.EndObject();
        }
        writer.EndArray();
        WriteJsonKey(writer, "total");
        writer.Uint64(total);
        writer.EndObject();
      },
      size_hint);
}

// fs.metadata {path} -> {kind, size, modified, version?, created?}: the
// last two from stores that keep them (memory, sqlite).
Result<WireMessage> ServeMetadata(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata,
                           ActOnJudged(context, scope, {{path, FileAccess::kRead}},
                                       [](ProjectFiles& judged, const std::vector<std::string>& resolved) {
                                         return judged.Metadata(resolved[0]);
                                       }));
  return SerializeResult(request.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "kind");
    WriteJsonString(writer, EntryKindName(metadata.kind));
    WriteJsonKey(writer, "size");
    writer.Uint64(metadata.size);
    WriteJsonKey(writer, "modified");
    WriteJsonString(writer, FormatTimestamp(metadata.modified_ms));
    if (metadata.version) {
      WriteJsonKey(writer, "version");
      writer.Uint64(*metadata.version);
    }
    if (metadata.created_ms) {
      WriteJsonKey(writer, "created");
      WriteJsonString(writer, FormatTimestamp(*metadata.created_ms));
    }
    writer.EndObject();
  });
}

// fs.delete {path, recursive?} -> {}.
// A recursive delete needs everything below to be writable as well
// (AuthorizeTreeBelow): deleting `src` must not take `src/.env` with it.
Result<WireMessage> ServeDelete(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "recursive"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> recursive, params.OptionalBool("recursive"));
  Status deleted = ActOnJudged(
      context, scope, {{path, FileAccess::kWrite, FinalLink::kActOnLink}},
      [&](ProjectFiles& judged, const std::vector<std::string>& resolved) -> Status {
        if (recursive.value_or(false)) {
          TOOLVFS_RETURN_IF_ERROR(AuthorizeTreeBelow(context, scope, judged, resolved[0]));
        }
        return judged.Delete(resolved[0], recursive.value_or(false));
      });
  if (!deleted.ok()) return deleted;
  return SerializeEmptyResult(request.id());
}

// fs.rename {from, to, overwrite?} -> {}.
// Both ends must be writable: a rename removes `from` and creates `to`;
// a directory moves with everything in it (AuthorizeTreeBelow).
Result<WireMessage> ServeRename(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"from", "to", "overwrite"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view from, params.String("from"));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view to, params.String("to"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> overwrite, params.OptionalBool("overwrite"));
  Status renamed = ActOnJudged(
      context, scope,
      {{from, FileAccess::kWrite, FinalLink::kActOnLink}, {to, FileAccess::kWrite, FinalLink::kActOnLink}},
      [&](ProjectFiles& judged, const std::vector<std::string>& resolved) -> Status {
        TOOLVFS_RETURN_IF_ERROR(AuthorizeTreeBelow(context, scope, judged, resolved[0]));
        return judged.Rename(resolved[0], resolved[1], overwrite.value_or(false));
      });
  if (!renamed.ok()) return renamed;
  return SerializeEmptyResult(request.id());
}

// Bytes of a grep answer besides its files and the id:
// {"jsonrpc":"2.0","id":,"result":{"matches":[],"truncated":true,
// "truncated_by":"max_result_bytes"}}\n is under 100 of them.
constexpr uint64_t kGrepAnswerFixedBytes = 256;

// fs.grep {pattern, paths?, extensions?, context?, case_insensitive?,
// max_matches?, include_ignored?} -> {matches, truncated}. Absent options
// take GrepOptions' defaults (max_matches 1000; 0 means no limit).
//
// Each path named in `paths` is authorized like a read (the user may be
// asked); the search then skips every file the tool may not read without
// asking: files the policy denies, and files the policy leaves uncovered
// unless they lie below a named path the user allowed. A grep never asks
// once per file.
Result<WireMessage> ServeGrep(const Message& request, const MethodContext& context, RequestScope& scope) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"pattern", "paths", "extensions", "context",
                                             "case_insensitive", "max_matches", "include_ignored"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view pattern, params.String("pattern"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> paths,
                           params.OptionalStringArray("paths"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> extensions,
                           params.OptionalStringArray("extensions"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> context_lines, params.OptionalUint("context"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> case_insensitive, params.OptionalBool("case_insensitive"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> max_matches, params.OptionalUint("max_matches"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> include_ignored, params.OptionalBool("include_ignored"));

  GrepOptions options;
  if (paths) options.paths.assign(paths->begin(), paths->end());
  if (extensions) options.extensions.assign(extensions->begin(), extensions->end());
  if (context_lines) {
    constexpr uint64_t kMaxContext = std::numeric_limits<uint32_t>::max();
    if (*context_lines > kMaxContext) {
      return InvalidArgumentError("Invalid params: 'context' must be at most " +
                                  std::to_string(kMaxContext) + " lines, got " +
                                  std::to_string(*context_lines));
    }
    options.context = static_cast<uint32_t>(*context_lines);
  }
  options.case_insensitive = case_insensitive.value_or(options.case_insensitive);
  options.max_matches = max_matches.value_or(options.max_matches);
  options.include_ignored = include_ignored.value_or(options.include_ignored);

  std::vector<std::string> granted;  // named paths allowed by the user, not the policy
  for (std::string_view path : options.paths) {
    TOOLVFS_ASSIGN_OR_RETURN(std::string resolved, context.project.ResolvePath(path));
    PolicyDecision decision = context.gate.policy().files.Check(FileAccess::kRead, resolved);
    TOOLVFS_RETURN_IF_ERROR(context.gate.Authorize(scope, "read", TargetOf(resolved), decision));
    if (decision.decision == Decision::kUncovered) granted.push_back(std::move(resolved));
  }
  if (options.paths.empty()) {
    // The whole project: recorded as a read of the root, judged per file.
    TOOLVFS_RETURN_IF_ERROR(context.gate.Authorize(scope, "read", TargetOf(""),
                                                   PolicyDecision::Allow("per file")));
  }
  const FilePolicy& files = context.gate.policy().files;
  // A cancelled request (the tool's `cancel`, the session ending, a
  // builtin's token) skips the files not yet opened and answers Cancelled.
  options.file_filter = [&files, &granted, &scope](std::string_view file) {
    if (scope.cancelled()) return false;
    switch (files.Check(FileAccess::kRead, file).decision) {
      case Decision::kAllow: return true;
      case Decision::kDeny: return false;
      case Decision::kUncovered:
        return std::any_of(granted.begin(), granted.end(),
                           [&](const std::string& prefix) { return PathContains(prefix, file); });
    }
    return false;
  };
  // The answer is written as the files come, in path order, and the search
  // stops once the answer limit cannot hold more (truncated_by
  // "max_result_bytes"): the host never builds an answer it must refuse.
  // The id and the answer's fixed parts take the rest of the limit.
  if (context.max_answer_bytes != std::numeric_limits<uint64_t>::max()) {
    const uint64_t fixed_bytes = request.id().ToJson().size() + kGrepAnswerFixedBytes;
    options.max_result_bytes = context.max_answer_bytes > fixed_bytes ? context.max_answer_bytes - fixed_bytes : 1;
  }
  // The lines the search holds and the JSON written so far count against
  // the host's budget for answers being built, until the answer is done.
  options.memory_budget = context.answer_memory;
  MemoryReservation answer_memory(context.answer_memory);
  Status searched;
  WireMessage answer = SerializeResult(request.id(), [&](JsonWriter& writer) {
    GrepJsonStream stream(writer);
    options.file_sink = [&](GrepFileMatches&& file) -> Status {
      if (!answer_memory.Grow(GrepFileJsonBytes(file))) return GrepOutOfMemoryError(*context.answer_memory);
      stream.WriteFile(file);
      return OkStatus();
    };
    Result<GrepResult> result = context.project.Grep(pattern, options);
    if (result.ok()) {
      stream.Finish(*result);
    } else {
      searched = result.status();
      stream.Finish(GrepResult());  // a complete object, dropped below
    }
  });
  if (!searched.ok()) return searched;
  if (scope.cancelled()) return Status(StatusCode::kCancelled, "fs.grep was cancelled before it finished");
  return answer;
}

constexpr MethodSpec kFsMethods[] = {
    {"fs.read", &Handle<ServeRead>, false},
    {"fs.write", &Handle<ServeWrite>, false},
    {"fs.exists", &Handle<ServeExists>, false},
    {"fs.list_dir", &Handle<ServeListDir>, false},
    {"fs.metadata", &Handle<ServeMetadata>, false},
    // A recursive delete or a directory's move walks the tree below it.
    {"fs.delete", &Handle<ServeDelete>, true},
    {"fs.rename", &Handle<ServeRename>, true},
    {"fs.grep", &Handle<ServeGrep>, true},  // walks the whole project
};

}  // namespace

std::span<const MethodSpec> FsMethods() { return kFsMethods; }

}  // namespace toolvfs
