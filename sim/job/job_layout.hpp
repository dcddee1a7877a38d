// Where the ranks of a training job land: which GPU each (dp, cp, tp) rank runs on.
//
// A job of N GPUs runs tensor parallelism of degree T inside a node, context parallelism
// of degree C (the schedule's GPUs: one CP group runs the attention schedule) and data
// parallelism D = N / (T x C) over the rest. Ranks are numbered with TP fastest, as
// Megatron-LM orders its parallel groups (order "tp-cp-ep-dp-pp", no EP or PP here):
//   tp-cp-dp (default):  gpu(d, c, t) = t + T x (c + C x d)
//   tp-dp-cp:            gpu(d, c, t) = t + T x (d + D x c)
// GPUs are numbered node-major (topology.hpp), so with T = GPUs per node rank c of a CP group
// sits on node c + C x d (tp-cp-dp) at local slot t: one CP group per (d, t), its ranks on C
// consecutive nodes of one rail. tp-dp-cp spreads a CP group's ranks D nodes apart.
// CP groups are numbered g = t + T x d (TP fastest again). Every group computes heads / T of
// the attention heads (and kv_heads / T): T must divide both, and the GPUs per node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class JobOrder : std::uint8_t { tp_cp_dp, tp_dp_cp };

const char* to_string(JobOrder order);

// The scenario's `job` key (scenario.hpp). dp = 0: N / (T x C).
struct JobSpec {
  int gpus = 0;
  int tp = 1;
  int dp = 0;
  JobOrder order = JobOrder::tp_cp_dp;
  int model_heads = 0;     // attention.heads of the whole model, before the split by tp
  int model_kv_heads = 0;  // attention.kv_heads likewise
};

// One rank's coordinates in the job.
struct JobRank {
  int dp = 0;
  int cp = 0;
  int tp = 0;
  friend bool operator==(JobRank, JobRank) = default;
};

class JobLayout {
 public:
  // cp = the schedule's GPUs. Throws std::invalid_argument when T x C does not divide N
  // (prepare_scenario checks first and names the scenario key).
  JobLayout(int gpus, int tp, int cp, JobOrder order);

  int gpus() const { return gpus_; }
  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  JobOrder order() const { return order_; }
  int cp_groups() const { return tp_ * dp_; }

  int gpu(JobRank rank) const;
  JobRank rank_of_gpu(int gpu) const;
  int group_of(JobRank rank) const { return rank.tp + tp_ * rank.dp; }
  JobRank group_rank(int group, int cp_rank) const { return {group / tp_, cp_rank, group % tp_}; }
  // The GPU of CP rank `cp_rank` (0 .. C-1) of group `group`.
  int gpu_of(int group, int cp_rank) const { return gpu(group_rank(group, cp_rank)); }
  // How many ranks of one CP group share a node of `gpus_per_node` GPUs (the same for every
  // group and node): what the schedule sees as its GPUs per node.
  int group_ranks_per_node(int gpus_per_node) const;

 private:
  int gpus_ = 0;
  int tp_ = 1;
  int cp_ = 1;
  int dp_ = 1;
  JobOrder order_ = JobOrder::tp_cp_dp;
};

}  // namespace tilesim
