// The fs.* methods (SPEC.md §4.3): each one checks its params, calls the
// ProjectFiles store and writes the result object. The store does the path
// checks and words its errors; this file only adds the protocol's view:
// parameter names, encodings, pagination and the wire shape of results.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "host/methods.h"
#include "protocol/base64.h"
#include "protocol/grep_json.h"
#include "protocol/wire_errors.h"

namespace toolvfs {
namespace {

// Serves one request: the answer, or the error to answer with.
using Serve = Result<WireMessage> (*)(const Message& request, ProjectFiles& project);

// The MethodHandler for `serve`: a failed Status becomes the error answer
// (its wire code comes from ErrorResponse, the one place that maps them).
template <Serve serve>
WireMessage Handle(const Message& request, const MethodContext& context) {
  Result<WireMessage> answer = serve(request, context.project);
  if (!answer.ok()) return ErrorResponse(request.id(), answer.status());
  return std::move(answer).value();
}

// fs.read {path, offset?, length?} -> {content, size, encoding?}.
//
// Without a range the whole file is read with Read (the common case, one
// read of a size known up front); with offset or length, ReadRange. Content
// that is not valid UTF-8 (a binary file, or a range that splits a
// character) is sent as base64, since a JSON string can only carry text.
Result<WireMessage> ServeRead(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "offset", "length"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> offset, params.OptionalUint("offset"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> length, params.OptionalUint("length"));

  std::string content;
  uint64_t size = 0;
  if (!offset && !length) {
    Result<std::string> read = project.Read(path);
    if (!read.ok()) {
      Status status = std::move(read).status();
      if (status.code() != StatusCode::kTooLarge) return status;
      // ReadRange's limit error says this itself; a whole-file read is
      // where a tool first meets the limit, so it learns the way around.
      return Status(StatusCode::kTooLarge,
                    status.message() + "; read it in parts with offset and length");
    }
    content = std::move(read).value();
    size = content.size();
  } else {
    TOOLVFS_ASSIGN_OR_RETURN(FileRange range, project.ReadRange(path, offset.value_or(0), length));
    content = std::move(range.content);
    size = range.file_size;
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
Result<WireMessage> ServeWrite(const Message& request, ProjectFiles& project) {
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

  // Text is written straight from the parsed message, without a copy.
  std::string decoded;
  if (encoding) {
    TOOLVFS_ASSIGN_OR_RETURN(decoded, Base64Decode(content));
    content = decoded;
  }
  TOOLVFS_RETURN_IF_ERROR(project.Write(path, content, mode));
  return SerializeResult(request.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "size");
    writer.Uint64(content.size());
    writer.EndObject();
  });
}

// fs.exists {path} -> {exists}. An escaping path is an error, not false.
Result<WireMessage> ServeExists(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(bool exists, project.Exists(path));
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
// entries, limit 0 none at all (only the total).
Result<WireMessage> ServeListDir(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "offset", "limit"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> offset, params.OptionalUint("offset"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> limit, params.OptionalUint("limit"));
  TOOLVFS_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, project.ListDir(path));

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

// fs.metadata {path} -> {kind, size, modified}.
Result<WireMessage> ServeMetadata(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(FileMetadata metadata, project.Metadata(path));
  return SerializeResult(request.id(), [&](JsonWriter& writer) {
    writer.StartObject();
    WriteJsonKey(writer, "kind");
    WriteJsonString(writer, EntryKindName(metadata.kind));
    WriteJsonKey(writer, "size");
    writer.Uint64(metadata.size);
    WriteJsonKey(writer, "modified");
    WriteJsonString(writer, FormatTimestamp(metadata.modified_ms));
    writer.EndObject();
  });
}

// fs.delete {path, recursive?} -> {}.
Result<WireMessage> ServeDelete(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"path", "recursive"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view path, params.String("path"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> recursive, params.OptionalBool("recursive"));
  TOOLVFS_RETURN_IF_ERROR(project.Delete(path, recursive.value_or(false)));
  return SerializeEmptyResult(request.id());
}

// fs.rename {from, to, overwrite?} -> {}.
Result<WireMessage> ServeRename(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"from", "to", "overwrite"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view from, params.String("from"));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view to, params.String("to"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> overwrite, params.OptionalBool("overwrite"));
  TOOLVFS_RETURN_IF_ERROR(project.Rename(from, to, overwrite.value_or(false)));
  return SerializeEmptyResult(request.id());
}

// fs.grep {pattern, paths?, extensions?, context?, case_insensitive?,
// max_matches?, include_ignored?} -> {matches, truncated}. Absent options
// take GrepOptions' defaults (max_matches 1000; 0 means no limit).
Result<WireMessage> ServeGrep(const Message& request, ProjectFiles& project) {
  const Params& params = request.params();
  TOOLVFS_RETURN_IF_ERROR(params.ExpectOnly({"pattern", "paths", "extensions", "context",
                                             "case_insensitive", "max_matches", "include_ignored"}));
  TOOLVFS_ASSIGN_OR_RETURN(std::string_view pattern, params.String("pattern"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> paths,
                           params.OptionalStringArray("paths"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<std::vector<std::string_view>> extensions,
                           params.OptionalStringArray("extensions"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> context, params.OptionalUint("context"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> case_insensitive, params.OptionalBool("case_insensitive"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<uint64_t> max_matches, params.OptionalUint("max_matches"));
  TOOLVFS_ASSIGN_OR_RETURN(std::optional<bool> include_ignored, params.OptionalBool("include_ignored"));

  GrepOptions options;
  if (paths) options.paths.assign(paths->begin(), paths->end());
  if (extensions) options.extensions.assign(extensions->begin(), extensions->end());
  if (context) {
    constexpr uint64_t kMaxContext = std::numeric_limits<uint32_t>::max();
    if (*context > kMaxContext) {
      return InvalidArgumentError("Invalid params: 'context' must be at most " +
                                  std::to_string(kMaxContext) + " lines, got " +
                                  std::to_string(*context));
    }
    options.context = static_cast<uint32_t>(*context);
  }
  options.case_insensitive = case_insensitive.value_or(options.case_insensitive);
  options.max_matches = max_matches.value_or(options.max_matches);
  options.include_ignored = include_ignored.value_or(options.include_ignored);

  TOOLVFS_ASSIGN_OR_RETURN(GrepResult result, project.Grep(pattern, options));
  // Presize: the lines dominate, plus about 60 bytes of keys per line.
  size_t size_hint = 64;
  for (const GrepFileMatches& file : result.matches) {
    size_hint += file.path.size() + 32;
    for (const GrepLine& line : file.lines) size_hint += line.content.size() + 64;
  }
  return SerializeResult(
      request.id(), [&](JsonWriter& writer) { WriteGrepResult(result, writer); }, size_hint);
}

constexpr MethodSpec kFsMethods[] = {
    {"fs.read", &Handle<ServeRead>, false},
    {"fs.write", &Handle<ServeWrite>, false},
    {"fs.exists", &Handle<ServeExists>, false},
    {"fs.list_dir", &Handle<ServeListDir>, false},
    {"fs.metadata", &Handle<ServeMetadata>, false},
    {"fs.delete", &Handle<ServeDelete>, false},
    {"fs.rename", &Handle<ServeRename>, false},
    {"fs.grep", &Handle<ServeGrep>, true},  // walks the whole project
};

}  // namespace

std::span<const MethodSpec> FsMethods() { return kFsMethods; }

}  // namespace toolvfs
