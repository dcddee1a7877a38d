// How much slower a rank's running compute progresses than alone on an idle device.
//
// stretch(rank) = interference(rank) x core_share(rank), both >= 1:
//  - interference = 1 + comm_slowdown x s, s in [0, 1] the traffic share of the rank's GPU
//    (TransferModel::gpu_traffic_share: bandwidth-bound transfers through the GPU, as
//    sender, receiver or relay, over what one transfer alone moves; copy engines and NCCL
//    kernels take memory bandwidth and SMs in proportion to the bytes they move);
//  - core_share = k / cores while k > cores computes run at once on the rank's topology
//    node and the profile sets `cores`, else 1 (fair sharing of a CPU host's cores, the same
//    rule as a link's flows).
// A compute with W unslowed picoseconds of work left therefore needs W x stretch more
// picoseconds while the stretch holds; the simulator re-rates it whenever the stretch changes.
#pragma once

#include <vector>

namespace tilesim {

class ComputeStretch {
 public:
  // rank_node: the topology node of each rank's GPU; compute_cores <= 0: no sharing.
  ComputeStretch(std::vector<int> rank_node, double comm_slowdown, double compute_cores);

  double of(int rank) const;
  // Whether communication slows computes at all (comm_slowdown > 0).
  bool interferes() const { return comm_slowdown_ > 0.0; }
  void set_comm_share(int rank, double share);  // s in [0, 1]
  // Whether ranks share cores at all; if so a compute starting or ending re-rates the other
  // ranks on its node.
  bool shares_cores() const { return compute_cores_ > 0.0; }
  void compute_runs(int rank, int delta);  // a compute started (+1) or ended (-1) on rank
  int node_of(int rank) const { return rank_node_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<int> rank_node_;
  double comm_slowdown_;
  double compute_cores_;
  std::vector<double> comm_share_;    // by rank
  std::vector<int> running_on_node_;  // computes running per node
};

}  // namespace tilesim
