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
//
// Progress: a flow's bytes are advanced only when its rate changes. Its state is
// an anchor (time t0, remaining bytes r0) and a rate x, so
//   finish_ps = t0 + ceil(r0 * 1e12 / x)
// and at a settle at time t that changes x, r0 becomes r0 - x * (t - t0) / 1e12
// and t0 becomes t. Drift guard, decided on time: a flow whose rate would change
// to x' at a settle and whose remaining bytes r there would take under one
// picosecond at x' (r * 1e12 < x', including r <= 0 from rounding its finish up) is
// finished at that settle's time (it takes no more bandwidth); a flow with a few
// bytes left whose rate collapses keeps going at its new rate. Finish times
// therefore depend only on each flow's rate history, not on how often settle is
// called. When the guard ends a flow the component is allocated again without it.
// A started flow moves from the settle that first gives it a rate.
//
// Cost of a settle: O(F log F + (F + L + R) log(L + R)) for the F flows, L links
// and R route entries of the affected components; other flows are not touched.
//
// Edge cases: a flow with an empty route (a same-device copy) is limited only
// by its cap; without a cap it finishes at its start time (rate reported as
// +infinity). A flow whose projected finish is <= the settle time but that was
// not taken yet keeps its finish time and gets rate 0. Invalid arguments (bad
// link id, repeated link, bytes <= 0, time going backwards, non-positive link
// capacity, unknown flow id) throw std::invalid_argument / std::out_of_range; a finish
// past the simulator's time range throws SimulatedRangeError (sim/core/units.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/network/max_min_fair.hpp"

namespace tilesim {

using FlowId = std::int64_t;

struct FlowSpec {
  std::vector<int> links;             // route, link ids in [0, link_count)
  double bytes = 0.0;                 // > 0
  double rate_cap_bytes_per_s = 0.0;  // <= 0 means no cap
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
  // Flows whose rate changed at the last settle (in the order they were re-rated; a flow
  // the drift guard ended is there with rate 0), so that a caller can follow loads.
  const std::vector<FlowId>& rerated_flows() const { return rerated_; }
  // Total number of flow-rate recomputations so far (for benchmarks).
  std::int64_t recomputed_flows() const;

  // Additions: whether a flow was started and not yet taken; its projected
  // finish (nullopt until the first settle after its start).
  bool contains(FlowId id) const;
  std::optional<Picoseconds> projected_finish_ps(FlowId id) const;

 private:
  static constexpr Picoseconds kNeverPs = std::numeric_limits<Picoseconds>::max();

  struct Flow {
    FlowId id = -1;
    std::vector<int> links;
    double bytes = 0.0;
    double rate_cap_bytes_per_s = 0.0;
    double remaining_bytes = 0.0;  // at anchor_ps
    double rate_bytes_per_s = 0.0;
    Picoseconds anchor_ps = 0;
    Picoseconds finish_ps = kNeverPs;
    std::uint64_t visit = 0;  // settle epoch that last reached it
    bool active = false;
    bool queued = false;  // (finish_ps, id, slot) is in finish_queue_
  };
  struct LinkMember {
    FlowId id;
    int slot;
  };
  using FinishKey = std::tuple<Picoseconds, FlowId, int>;  // (finish, id, slot)

  const Flow& flow_at(FlowId id) const;
  bool is_live(const LinkMember& member) const;
  void mark_dirty(int link);
  void collect_component();
  void allocate_component(Picoseconds now);
  void set_finish(int slot, Picoseconds finish_ps);
  double remaining_at(const Flow& flow, Picoseconds now) const;

  std::vector<double> capacity_;
  std::vector<Flow> flows_;  // by slot
  std::vector<int> free_slots_;
  std::map<FlowId, int> slot_of_;
  std::vector<std::vector<LinkMember>> link_members_;  // by link, in id order
  std::vector<std::uint64_t> link_visit_;
  std::vector<char> link_dirty_;
  std::vector<int> dirty_links_;
  std::vector<int> pending_routeless_;  // slots of unsettled empty-route flows
  std::vector<FlowId> rerated_;         // at the last settle
  std::set<FinishKey> finish_queue_;
  FlowId next_id_ = 0;
  Picoseconds last_settle_ps_ = 0;
  std::uint64_t epoch_ = 0;
  std::int64_t recomputed_flows_ = 0;

  // Per-settle scratch (kept to avoid re-allocation).
  std::vector<int> component_;  // slots, sorted by id
  std::vector<int> link_stack_;
  std::vector<int> solved_;  // slots given to the solver
  FairShareProblem problem_;
  std::vector<double> rates_;
  MaxMinFairSolver solver_;
};

}  // namespace tilesim
