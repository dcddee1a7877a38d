// Flow-level network with max-min fair sharing.
//
// Model: each active flow moves `bytes` over a fixed route (a list of link ids).
// Every link l has an effective capacity C_l (bytes/s). Rates are the max-min
// fair allocation (progressive filling / water-filling): repeatedly find the
// bottleneck link whose remaining capacity divided by its unfrozen flows is
// smallest, give those flows that share and freeze them; a flow may also be
// capped by its own `rate_cap_bytes_per_s` (one NCCL pair cannot fill a link),
// which freezes it at the cap when the cap is below the current fair level.
//
// Rates are recomputed lazily: add/finish mark links dirty, and `settle(now)`
// recomputes only the connected component (flows linked transitively through
// shared links) of the dirty links, once per timestamp however many flows
// changed. Between settles every flow progresses at a constant rate, so each
// flow's finish time is known exactly; finish times are rounded up to whole
// picoseconds and the state is deterministic (ties broken by flow id).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

using FlowId = std::int64_t;

struct FlowSpec {
  std::vector<int> links;               // route, link ids in [0, link_count)
  double bytes = 0.0;                   // > 0
  double rate_cap_bytes_per_s = 0.0;    // <= 0 means no cap
};

class FlowNetwork {
 public:
  explicit FlowNetwork(std::vector<double> link_capacity_bytes_per_s);

  // Starts a flow at time `now` (must not be earlier than the last settle).
  // Its rate is 0 until the next settle(now).
  FlowId start(FlowSpec spec, Picoseconds now);

  // Recomputes rates of the flows affected since the last settle.
  void settle(Picoseconds now);

  // Earliest projected finish among active flows (after settle), if any.
  std::optional<Picoseconds> next_finish_ps() const;

  // Removes and returns, in increasing flow id order, every flow whose projected
  // finish is <= now. The caller must call settle(now) afterwards.
  std::vector<FlowId> take_finished(Picoseconds now);

  double rate_bytes_per_s(FlowId id) const;  // current rate of an active flow
  std::size_t active_flows() const;
  int link_count() const;
  // Sum of current flow rates on a link (for utilisation counters).
  double link_load_bytes_per_s(int link) const;
  // Total number of flow-rate recomputations so far (for benchmarks).
  std::int64_t recomputed_flows() const;

 private:
  // Owned by the network module: plain value members (copyable), no globals.
  std::vector<double> capacity_;
};

}  // namespace tilesim
