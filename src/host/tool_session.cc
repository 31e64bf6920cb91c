#include "host/tool_session.h"

namespace toolvfs {

SessionResult RunToolSession(ChildProcess&, const SessionSetup&, const MethodContext&,
                             CancelToken&) {
  return {};
}

}  // namespace toolvfs
