#include "policy/decision.h"

namespace toolvfs {

std::string_view DecisionName(Decision decision) {
  switch (decision) {
    case Decision::kAllow: return "allow";
    case Decision::kDeny: return "deny";
    case Decision::kUncovered: return "uncovered";
  }
  return "uncovered";
}

}  // namespace toolvfs
