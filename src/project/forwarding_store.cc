#include "project/forwarding_store.h"

namespace toolvfs {

ProjectFiles& ForwardingProjectFiles::WithoutSymlinks() {
  ProjectFiles& target_view = target_.WithoutSymlinks();
  // A target without symlinks is its own view: so is this wrapper, which
  // then needs no second object.
  if (&target_view == &target_) return *this;
  std::call_once(view_once_, [&] { view_ = NewWithoutSymlinksView(target_view); });
  return *view_;
}

std::unique_ptr<ProjectFiles> ForwardingProjectFiles::NewWithoutSymlinksView(ProjectFiles& target_view) {
  return std::make_unique<ForwardingProjectFiles>(target_view);
}

}  // namespace toolvfs
