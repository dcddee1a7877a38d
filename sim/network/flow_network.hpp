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
// Rates are recomputed lazily: add/finish mark changes, and `settle(now)` recomputes
// only the components (flows linked transitively through shared links) the changes
// touched, once per timestamp however many flows changed. Between settles every flow
// progresses at a constant rate, so each flow's finish time is known exactly; finish
// times are rounded up to whole picoseconds and the state is deterministic (ties
// broken by flow id).
//
// Incremental filling: the progressive filling of a component is kept as a log of its
// pops (each a fill level: the share, the link or cap that set it, the flows it froze)
// and, per link, the (frozen count, remaining capacity) after each pop that touched
// it. A settle that removes flows from one log or adds flows to it rolls the filling
// back to the first pop the change can alter and resumes from the restored state; the
// pops before it are exactly those a full solve would make (proof in
// flow_network_filling.cpp), so the rates are bit-identical to a full solve. A removed
// flow can alter pops from the one that froze it on; an added flow from the first pop
// whose level is above its cap or above the share one of its links would offer with
// it (tested against the running maximum of the levels, which errs early, never late).
// Logs stand for whole components, found without a search: a scratch solve splits its
// flows into connected components, one log each; a started flow joins the log its
// links belong to, and one whose links belong to several logs merges them in a scratch
// solve. A removal that splits a component leaves one log for both parts: still
// exact (parts do not interact), at the cost of re-solving the other part's later pops.
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
// Cost of a settle: O((F' + R') log(L' + F')) for the F' flows and R' route entries
// frozen at or after the first pop the change can alter (L' links), plus the route
// entries of the changed flows and, per added flow, O(steps log pops) of its links to
// find that pop; a merge or a start into fresh links costs a scratch solve of the
// flows concerned. No node-based container: flat vectors, an indexed level heap and an
// indexed finish heap, slots reused after the settle that removes their flow.
//
// Multiplicity: a flow that stands for m identical flows on a link counts m times in
// that link's unfrozen flows and subtracts its rate m times (one subtraction per
// member, as m flows frozen one after the other do), so m identical flows with
// consecutive ids and one flow of multiplicity m get the same bits.
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
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

using FlowId = std::int64_t;

struct FlowSpec {
  std::vector<int> links;             // route, link ids in [0, link_count)
  double bytes = 0.0;                 // > 0
  double rate_cap_bytes_per_s = 0.0;  // <= 0 means no cap
  // Per link of the route, how many identical flows this one stands for there (each
  // takes a share of the link: a class of symmetric flows); empty means 1 everywhere.
  // Bytes, cap and the reported rate are those of one member.
  std::vector<int> link_multiplicity = {};
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

  struct alignas(64) Flow {
    // The fields the filling reads for every flow it freezes or rolls back come first,
    // in one cache line (the filling walks thousands of flows per settle).
    FlowId id = -1;
    int pop = -1;                          // pop of the filling that froze it (-1: none yet)
    double filled_rate_bytes_per_s = 0.0;  // the rate that pop gave
    double rate_cap_bytes_per_s = 0.0;
    std::vector<int> links;
    int log = -1;  // component log holding it (with log_stamp)
    bool active = false;
    bool in_filling = false;        // takes bandwidth in its component's filling
    bool multiplied = false;        // multiplicity is not empty
    bool queued = false;            // has a projected finish in finish_heap_
    std::vector<int> multiplicity;  // per link; empty: 1 everywhere
    double bytes = 0.0;
    double remaining_bytes = 0.0;  // at anchor_ps
    double rate_bytes_per_s = 0.0;
    Picoseconds anchor_ps = 0;
    Picoseconds finish_ps = kNeverPs;
    std::uint64_t visit = 0;  // split that last reached it
    std::uint64_t log_stamp = 0;
    std::uint64_t resolved_mark = 0;  // settle epoch that last re-solved it
    std::uint64_t fired_mark = 0;     // settle epoch whose drift guard ended it
    int heap_pos = -1;                // position in finish_heap_, -1 when not queued
  };
  struct LinkMember {
    FlowId id;
    int slot;
  };
  // One pop of the progressive filling: the fill level (share, tag) it froze flows at,
  // the running maximum of the levels up to it, and where its frozen flows start in the
  // log's freeze order.
  struct Pop {
    double share_bytes_per_s;
    std::int64_t tag;  // link id, or link count + flow id for a cap
    double max_share_bytes_per_s;
    std::int64_t max_tag;
    int freeze_begin;
  };
  // A link's state after a pop that froze some of its flows.
  struct LinkStep {
    int pop;
    int frozen;
    double remaining_bytes_per_s;
  };
  // The filling of one component (or of a union of components: they do not interact).
  struct FillingLog {
    std::uint64_t stamp = 0;  // 0: free
    std::uint64_t mark = 0;   // settle epoch that involved it
    int live_flows = 0;       // flows in the filling that belong to it
    std::vector<Pop> pops;
    std::vector<int> freezes;  // slots, in freeze order
  };
  // An entry of the level heap: a link (item = link id) or a cap (item = link count + slot).
  struct HeapEntry {
    double share_bytes_per_s;
    std::int64_t tag;
    int item;
  };

  const Flow& flow_at(FlowId id) const;
  bool is_live(const LinkMember& member) const;
  void mark_dirty(int link);
  void prune_dirty_links();
  void allocate(Picoseconds now);
  void set_finish(int slot, Picoseconds finish_ps);
  void unqueue(int slot);
  void sift_finish(int pos);
  void forget_taken_ids();
  void sort_by_id(std::vector<int>& slots);
  double remaining_at(const Flow& flow, Picoseconds now) const;
  static int shares_on(const Flow& flow, std::size_t route_index) {
    return flow.multiplied ? flow.multiplicity[route_index] : 1;
  }

  // Filling (flow_network_filling.cpp).
  bool log_is_valid(const Flow& flow) const;
  int new_log();
  void drop_log(int log);
  void solve_components_from_scratch(const std::vector<int>& slots);
  void enter_filling(int log, int slot);
  int solve_from_scratch(const std::vector<int>& slots);
  void solve_incrementally(int log, const std::vector<int>& removed, const std::vector<int>& added);
  int first_altered_pop(const FillingLog& log, const std::vector<int>& removed,
                        const std::vector<int>& added);
  void roll_back(FillingLog& log, int pop);
  void reset_link(int link, int log, std::uint64_t stamp);
  double link_share(int link) const;  // of a link with unfrozen flows
  void push_link(int link);
  void push_cap(int slot);
  void place_level(int pos, const HeapEntry& entry);
  void sift_level(int pos);
  void remove_level(int pos);
  void mark_link(int link);
  void fill(int log_index);
  void freeze(FillingLog& log, int slot, double rate_bytes_per_s);

  std::vector<double> capacity_;
  std::vector<Flow> flows_;  // by slot
  std::vector<int> free_slots_;
  std::vector<int> released_slots_;  // taken since the last settle: reusable after it
  std::vector<int> slot_of_id_;      // by FlowId - first_id_; -1 when not active
  FlowId first_id_ = 0;
  std::size_t dead_id_prefix_ = 0;  // leading entries of slot_of_id_ known to be -1
  std::size_t active_count_ = 0;
  std::vector<std::vector<LinkMember>> link_members_;  // by link, in id order
  std::vector<std::uint64_t> link_visit_;
  std::vector<char> link_dirty_;
  std::vector<int> dirty_links_;
  std::vector<int> pending_routeless_;  // slots of unsettled empty-route flows
  std::vector<int> pending_started_;    // slots of unsettled flows with a route
  std::vector<int> taken_in_filling_;   // slots taken since the last settle, still filled
  std::vector<FlowId> rerated_;         // at the last settle
  std::vector<int> finish_heap_;        // slots, min-heap on (finish_ps, id)
  FlowId next_id_ = 0;
  Picoseconds last_settle_ps_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint64_t visit_epoch_ = 0;  // of the component split
  std::int64_t recomputed_flows_ = 0;

  // Filling state by link, in one cache line per link (a freeze and a roll-back touch
  // all of it): the log that last filled it (by stamp), its flows in the filling, how
  // many are frozen and its remaining capacity, the pop that saturated it (-1: none) and
  // its steps; valid only for the links of a live log. And the per-settle mark.
  struct alignas(64) LinkFill {
    std::uint64_t stamp = 0;
    std::uint64_t mark = 0;
    double remaining_bytes_per_s = 0.0;
    int log = -1;
    int members = 0;
    int frozen = 0;
    int popped_at = -1;
    std::vector<LinkStep> steps;
  };
  std::vector<LinkFill> link_fill_;
  // Position in heap_ by item (links, then caps by slot), -1 when not there.
  std::vector<int> level_pos_;
  // By slot: 1 while the flow is in a filling and not frozen yet (in_filling, pop < 0),
  // kept apart from Flow so that a popped link's member scan stays in cache.
  std::vector<char> slot_open_;
  std::vector<FillingLog> logs_;
  std::vector<int> free_logs_;
  std::uint64_t next_log_stamp_ = 1;

  // Per-settle scratch (kept to avoid re-allocation).
  std::vector<int> involved_logs_;
  std::vector<int> due_;        // finish-heap positions
  std::vector<int> component_;  // slots
  std::vector<int> flow_stack_;
  std::vector<int> resolved_;  // slots re-solved at this settle
  std::vector<int> candidate_links_;
  std::uint64_t link_mark_epoch_ = 0;
  std::vector<int> link_added_;    // by link: flows added at this settle
  std::vector<int> link_removed_;  // by link: flows removed at this settle
  std::vector<int> unfrozen_caps_;
  std::vector<int> frozen_now_;
  std::vector<std::pair<FlowId, int>> id_order_;
  std::vector<HeapEntry> heap_;  // indexed min-heap of fill levels, one entry per item
};

}  // namespace tilesim
