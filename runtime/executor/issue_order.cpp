#include "runtime/executor/issue_order.hpp"

#include <algorithm>

namespace tilesim::runtime {

IssueOrder::IssueOrder(const Plan& plan, int rank)
    : semantics_(SemanticsDeriver(plan).derive(rank)) {}

void IssueOrder::waits_for(int op, std::vector<int>& out) const {
  out.clear();
  const int group = semantics_.group_of(op);
  for (int p : semantics_.prerequisites(op)) {
    if (group >= 0 && semantics_.group_of(p) == group) continue;
    out.push_back(p);
  }
  if (group > 0) {
    const auto previous = semantics_.group_ops(group - 1);
    out.insert(out.end(), previous.begin(), previous.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

}  // namespace tilesim::runtime
