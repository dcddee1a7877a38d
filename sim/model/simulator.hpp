// The discrete-event simulator: executes a plan (plan_tracker.hpp semantics)
// over a topology with the costs of a calibration profile.
//
// Time advances from event to event: compute completions, flow starts (a
// transfer starts moving bytes alpha after both sides are posted; alpha is the
// software latency of the slowest link class on the route), flow completions
// from the max-min fair network (link capacity = spec bandwidth x class
// efficiency, flow cap = the smallest cap of the classes on the route), and
// transfer completions (flow end + the route's propagation latency). While a
// transfer touches its GPU, a compute progresses (1 + comm_slowdown) times
// slower, for exactly the overlapping time. With a profile's `cores` set, the
// ranks on one topology node share that many compute units: while k > cores
// computes run there, each progresses at cores / k of its rate (fair sharing, the
// same rule as a link's flows; a CPU host running more ranks than cores).
// Same inputs give the same result to the picosecond.
#pragma once

#include <vector>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct SimulationOptions {
  std::vector<int> placement;  // rank -> GPU index; empty = the plan's placement
  bool record_link_samples = false;
};

// Throws PlanError if the plan cannot run to completion (the validator catches
// that first), std::invalid_argument for a placement outside the topology.
SimulationResult simulate(const Plan& plan, const Topology& topology,
                          const CalibrationProfile& profile, const SimulationOptions& options = {});

}  // namespace tilesim
