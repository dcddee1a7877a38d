// The cost parameters the simulator uses, loaded from a calibration YAML.
//
// Compute: one attention call (q_tokens x kv_tokens, `heads` heads, batch b) with F FLOPs takes
//   F / (peak_flops * e) + launch_overhead,
//   e = min(1, efficiency(pass, head_dim, sqrt(q_tokens * kv_tokens)) * occupancy factor)
// where efficiency is a table over block size (tokens), interpolated linearly in log2(size) and
// extrapolated past its ends by the rule in efficiency_curve.hpp (callers warn), and the optional
// occupancy factor (compute.occupancy: sms, ctas_per_sm, tile, reference_ctas) charges the idle
// SMs of a call with few CTAs (occupancy.hpp): CTAs = b x heads x ceil(tokens / tile), so a
// Ulysses call with heads / u heads or a small chunk runs below the table. Within a compute op,
// each block pair the causal mask cuts runs at e x causal_efficiency(block tokens): the
// masked diagonal tiles cost relatively more on small blocks (FA3 causal/full is
// 0.83 at 2K and 0.95 at 16K tokens on H100). A merge of B bytes takes B / merge_bytes_per_s +
// launch. Communication slows compute (flow_transfer_model.hpp, compute_stretch.hpp): a compute
// runs (1 + comm_slowdown x s) slower, s in [0, 1] the share of its GPU's transfer rate that
// transfers of at least comm_slowdown_min_bytes (default 64 KiB; smaller ones are
// latency-bound) moving through the GPU use; comm_slowdown is thus the slowdown while one
// large transfer runs at full speed, which the calibration probe measures. Optional
// `cores` (compute_cores; 0 = absent): the ranks placed on one topology node share that many
// compute units fairly, so k concurrent compute-stream ops on a node each progress at min(1, cores
// / k) of their own rate (a CPU host running more ranks than cores). Links: per class, the
// achievable share of the spec bandwidth (efficiency), the per-message software latency alpha, and
// a per-flow rate cap (one NCCL send/recv pair cannot fill an NVLink); 0 = no cap.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/model/efficiency_curve.hpp"
#include "sim/model/occupancy.hpp"
#include "sim/model/table_range_log.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// One attention kernel call: the tokens it tiles, the heads it covers, the batch.
struct AttentionCall {
  Pass pass = Pass::fwd;
  int head_dim = 0;
  double q_tokens = 0.0;
  double kv_tokens = 0.0;
  int heads = 0;
  int batch = 1;
  // Work (unmasked pairs) of each tile of one (batch, head) group in grid order, when the
  // call's tiles differ in work (a causally cut call; occupancy.hpp); empty: all equal.
  std::vector<double> tile_work;
};

struct LinkCost {
  double efficiency = 1.0;
  double alpha_s = 0.0;
  double flow_cap_bytes_per_s = 0.0;
  bool defined = false;  // the profile names this class
};

struct CalibrationProfile {
  std::string source;  // file it came from
  std::string gpu;
  double peak_flops = 0.0;
  double launch_overhead_s = 0.0;
  double merge_bytes_per_s = 0.0;
  double comm_slowdown = 0.0;
  double comm_slowdown_min_bytes = 65536.0;  // messages below it do not slow compute
  double compute_cores = 0.0;  // shared compute units per node; 0 = one per rank (no sharing)
  // The device's memory (`compute.memory`, datasheet); 0 = not given. A simulated peak above it
  // is a warning in the result: the plan would not fit the device as costed.
  double device_memory_bytes = 0.0;
  EfficiencyCurve causal_efficiency;  // factor by block size (tokens)
  // efficiency[pass][head_dim] -> curve
  std::map<int, EfficiencyCurve> forward;
  std::map<int, EfficiencyCurve> backward;
  OccupancyModel occupancy;  // disabled (sms 0) unless the profile has compute.occupancy
  std::array<LinkCost, kLinkClassCount> links{};

  // The table value alone (nearest head_dim row, ties to the larger one).
  double efficiency(Pass pass, int head_dim, double block_tokens) const;
  // e of the header for one call; a lookup that leaves the table is noted in `log` (if given).
  double call_efficiency(const AttentionCall& call, TableRangeLog* log) const;
  // causal_efficiency at `block_tokens`, noted in `log` when it leaves the table.
  double causal_factor(double block_tokens, TableRangeLog* log) const;
  const LinkCost& link(LinkClass cls) const { return links[static_cast<std::size_t>(cls)]; }
};

// Throws InputError (file, line, key) on any malformed or missing value.
CalibrationProfile load_calibration(const std::string& path);

}  // namespace tilesim
