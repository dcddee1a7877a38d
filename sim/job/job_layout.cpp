#include "sim/job/job_layout.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tilesim {

const char* to_string(JobOrder order) {
  return order == JobOrder::tp_cp_dp ? "tp-cp-dp" : "tp-dp-cp";
}

JobLayout::JobLayout(int gpus, int tp, int cp, JobOrder order)
    : gpus_(gpus), tp_(tp), cp_(cp), order_(order) {
  if (tp < 1 || cp < 1 || gpus < 1 || gpus % (tp * cp) != 0) {
    throw std::invalid_argument(
        fmt::format("job of {} GPUs cannot hold TP {} x CP {} groups", gpus, tp, cp));
  }
  dp_ = gpus / (tp * cp);
}

int JobLayout::gpu(JobRank r) const {
  const int outer = order_ == JobOrder::tp_cp_dp ? r.cp + cp_ * r.dp : r.dp + dp_ * r.cp;
  return r.tp + tp_ * outer;
}

JobRank JobLayout::rank_of_gpu(int gpu) const {
  const int t = gpu % tp_;
  const int outer = gpu / tp_;
  if (order_ == JobOrder::tp_cp_dp) return {outer / cp_, outer % cp_, t};
  return {outer % dp_, outer / dp_, t};
}

int JobLayout::group_ranks_per_node(int gpus_per_node) const {
  if (gpus_per_node < 1) return 1;
  const int node = gpu_of(0, 0) / gpus_per_node;
  int same = 0;
  for (int c = 0; c < cp_; ++c) same += gpu_of(0, c) / gpus_per_node == node ? 1 : 0;
  return same;
}

}  // namespace tilesim
