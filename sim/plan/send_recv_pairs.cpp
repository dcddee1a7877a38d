#include "sim/plan/send_recv_pairs.hpp"

#include <deque>
#include <map>
#include <stdexcept>
#include <utility>

namespace tilesim {

std::vector<SendRecvPair> send_recv_pairs(const Plan& plan) {
  std::map<std::pair<int, int>, std::deque<OpId>> sends;  // (from, to) -> send ops in order
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind == OpKind::send) sends[{r, op.peer}].push_back(OpId{r, i});
    }
  }
  std::vector<SendRecvPair> out;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind != OpKind::recv) continue;
      auto& queue = sends[{op.peer, r}];
      if (queue.empty()) {
        throw std::invalid_argument(plan.describe({r, i}) + " has no matching send");
      }
      out.push_back({queue.front(), OpId{r, i}});
      queue.pop_front();
    }
  }
  return out;
}

}  // namespace tilesim
