#include "session/session_config.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace toolvfs {
namespace {

uint32_t Narrow(uint64_t value) {
  return static_cast<uint32_t>(std::min<uint64_t>(value, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

SessionSettings SessionSettingsFrom(const std::optional<SessionConfig>& config, std::string id) {
  SessionSettings settings;
  settings.id = std::move(id);
  if (!config) return settings;
  if (config->max_content_chars) settings.limits.max_content_chars = *config->max_content_chars;
  if (config->max_depth) settings.limits.max_depth = Narrow(*config->max_depth);
  if (config->max_segment_chars) settings.limits.max_segment_chars = Narrow(*config->max_segment_chars);
  if (config->max_total_bytes) settings.limits.max_total_bytes = *config->max_total_bytes;
  if (config->max_files) settings.limits.max_files = *config->max_files;
  settings.allowed_roots = config->allowed_roots;
  for (const SessionMountConfig& mount : config->mounts) {
    settings.mounts.push_back(SessionMount{.host_path = mount.host_path,
                                           .mount_path = mount.mount_path,
                                           .include_glob = mount.include_glob,
                                           .exclude_glob = mount.exclude_glob,
                                           .max_bytes = mount.max_bytes,
                                           .follow_symlinks = mount.follow_symlinks});
  }
  return settings;
}

}  // namespace toolvfs
