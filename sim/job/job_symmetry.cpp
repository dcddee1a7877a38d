#include "sim/job/job_symmetry.hpp"

#include <algorithm>
#include <utility>

#include "sim/job/job_plan.hpp"

namespace tilesim {

RankPeers group_send_peers(const Plan& group_plan) {
  RankPeers peers(static_cast<std::size_t>(group_plan.ranks));
  if (group_plan.comm_style == CommStyle::nccl_ring) {
    // A ring collective's step also runs through the lanes of the sender's and the receiver's
    // nodes (flow_transfer_model.hpp), GPUs of any rank of the group: the search must map the
    // routes to all of them.
    for (int r = 0; r < group_plan.ranks; ++r) {
      for (int d = 0; d < group_plan.ranks; ++d) {
        if (d != r) peers[static_cast<std::size_t>(r)].push_back(d);
      }
    }
    return peers;
  }
  for (int r = 0; r < group_plan.ranks; ++r) {
    const RankProgram& program = group_plan.programs[static_cast<std::size_t>(r)];
    std::vector<int>& mine = peers[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind == OpKind::send) mine.push_back(op.peer);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  }
  return peers;
}

RankShiftSymmetry find_job_symmetry(const Plan& group_plan, const RankPeers& group_peers,
                                    const JobLayout& layout, const Topology& topology,
                                    const CalibrationProfile& profile) {
  const int group_ranks = group_plan.ranks;
  ShiftSearch search;
  search.placement = job_placement(group_plan, layout);
  search.peers.reserve(search.placement.size());
  for (int g = 0; g < layout.cp_groups(); ++g) {
    for (const std::vector<int>& mine : group_peers) {
      std::vector<int> shifted = mine;
      for (int& d : shifted) d += g * group_ranks;
      search.peers.push_back(std::move(shifted));
    }
  }
  // Only whole groups: a shift inside a group would ask the group plan itself to be symmetric,
  // which the single-group quotients (symmetric_plan.hpp) decide per schedule.
  search.shift_allowed = [group_ranks](int k) { return k % group_ranks == 0; };
  search.node_cores_shared = profile.compute_cores > 0;
  return find_rank_shift_symmetry(topology, std::move(search));
}

}  // namespace tilesim
