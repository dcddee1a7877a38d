#include "sim/schedules/pairwise_exchange.hpp"

#include <algorithm>

#include "sim/plan/program_builder.hpp"

namespace tilesim {

void add_pairwise_exchange_member(Plan& plan, CommGroups& groups, const std::vector<int>& members,
                                  int i, const ExchangeObjects& objects,
                                  std::span<const int> recv_after) {
  ProgramBuilder build(plan);
  const int n = static_cast<int>(members.size());
  if (n < 2) return;  // nothing to exchange, and no empty comm group
  const int rank = members[static_cast<std::size_t>(i)];
  // A member with nothing to send or receive (a window needs no peer) posts no group.
  bool any = false;
  for (int t = 1; t < n && !any; ++t) {
    any = !objects(i, (i + t) % n).empty() || !objects((i - t + n) % n, i).empty();
  }
  if (!any) return;
  const int g = groups.take(rank);
  for (int t = 1; t < n; ++t) {
    const int to = (i + t) % n;
    for (int obj : objects(i, to)) build.send(rank, obj, members[static_cast<std::size_t>(to)], g);
  }
  for (int t = 1; t < n; ++t) {
    const int from = (i - t + n) % n;
    for (int obj : objects(from, i)) {
      build.recv(rank, obj, members[static_cast<std::size_t>(from)], g, recv_after);
    }
  }
}

void add_pairwise_exchange(Plan& plan, CommGroups& groups, const std::vector<int>& members,
                           const ExchangeObjects& objects, int emit_members) {
  const int n = static_cast<int>(members.size());
  const int emit = emit_members < 0 ? n : std::min(n, emit_members);
  for (int i = 0; i < emit; ++i) {
    add_pairwise_exchange_member(plan, groups, members, i, objects);
  }
}

}  // namespace tilesim
