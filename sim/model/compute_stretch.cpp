#include "sim/model/compute_stretch.hpp"

#include <algorithm>

namespace tilesim {

ComputeStretch::ComputeStretch(std::vector<int> rank_node, double comm_slowdown,
                               double compute_cores)
    : rank_node_(std::move(rank_node)),
      comm_slowdown_(comm_slowdown),
      compute_cores_(compute_cores),
      comm_share_(rank_node_.size(), 0.0) {
  const int nodes =
      rank_node_.empty() ? 1 : *std::max_element(rank_node_.begin(), rank_node_.end()) + 1;
  running_on_node_.assign(static_cast<std::size_t>(nodes), 0);
}

double ComputeStretch::of(int rank) const {
  const double share = comm_share_[static_cast<std::size_t>(rank)];
  const double interference = share > 0.0 ? 1.0 + comm_slowdown_ * share : 1.0;
  const int k = running_on_node_[static_cast<std::size_t>(node_of(rank))];
  const double cores_share =
      compute_cores_ > 0.0 && k > compute_cores_ ? static_cast<double>(k) / compute_cores_ : 1.0;
  return interference * cores_share;
}

void ComputeStretch::set_comm_share(int rank, double share) {
  comm_share_[static_cast<std::size_t>(rank)] = share;
}

void ComputeStretch::compute_runs(int rank, int delta) {
  running_on_node_[static_cast<std::size_t>(node_of(rank))] += delta;
}

}  // namespace tilesim
