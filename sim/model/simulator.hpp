// The discrete-event simulator: executes a plan (plan_tracker.hpp semantics)
// over a topology with the costs of a calibration profile.
//
// Time advances from event to event: compute completions, and the transfer
// model's changes (sim/network/transfer_model.hpp). The simulator owns no
// network policy: it posts each transfer (source GPU, destination GPU, bytes)
// when both sides are ready and learns when its last byte arrived; the max-min
// flow model (flow_transfer_model.hpp: alpha, link capacity x efficiency, flow
// caps, propagation) is the implementation used here. A compute op's duration
// comes from the compute model, stretched by the traffic through its GPU (the
// model's gpu_traffic_share) and while computes share a node's cores
// (compute_stretch.hpp), for exactly the time each holds. Link loads are sampled
// for traces (link_sampler.hpp).
// Results stream: the per-rank totals (end, busy, exposed communication, bytes,
// peak memory) are accumulated as events happen, in O(P) memory. Per-op times
// and per-transfer records (O(ops)) are kept only when asked for: traces,
// validation against a measured run, the tuner's bound analysis. The totals are
// the same either way (tests/test_simulator_streaming.cpp).
// Same inputs give the same result to the picosecond.
#pragma once

#include <limits>
#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

class ProgramSource;  // windowed_tracker.hpp

inline constexpr Picoseconds kNeverStop = std::numeric_limits<Picoseconds>::max();

struct SimulationOptions {
  std::vector<int> placement;  // rank -> GPU index; empty = the plan's placement
  bool record_link_samples = false;
  bool record_ops = false;        // SimulationResult::ops, per-op start and end
  bool record_transfers = false;  // SimulationResult::transfers
  // SimulationResult::route_busy_ps: per (source GPU, destination GPU), O(GPU pairs used)
  // instead of O(transfers); the tuner's bound analysis needs only that.
  bool record_route_busy = false;
  // Stop-at-time, for a search that only needs to know the makespan is above a threshold
  // (tune_search.hpp): while ops remain unfinished, the run stops before the first event later
  // than this, with SimulationResult::stopped_at_ps set to that event's time (every unfinished
  // op ends at a pending event, so the makespan is at least it); the totals are then partial.
  // The events up to it are handled exactly as in a run to the end.
  Picoseconds stop_after_ps = kNeverStop;
};

// Throws PlanError if the plan cannot run to completion (the validator catches
// that first), std::invalid_argument for a placement outside the topology.
SimulationResult simulate(const Plan& plan, const Topology& topology,
                          const CalibrationProfile& profile, const SimulationOptions& options = {});

// The same over a plan of every rank generated as it runs (windowed_tracker.hpp; the ring
// family's and USP's sources with K = P, sim/scenario/lazy_plan.hpp): the result of simulate()
// over the whole plan. Per-op and per-transfer records need every op's id kept:
// std::invalid_argument when options ask for them (record_route_busy and stop_after_ps are fine).
SimulationResult simulate_windowed(ProgramSource& source, const Topology& topology,
                                   const CalibrationProfile& profile,
                                   const SimulationOptions& options = {});

}  // namespace tilesim
