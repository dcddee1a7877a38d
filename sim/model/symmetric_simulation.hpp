// Symmetric simulation: a quotient plan holding one rank per class of a shift symmetry
// (sim/model/rank_shift_symmetry.hpp; the ring's in ring_symmetry.hpp) built by the
// schedule's classes generator (make_pass_kv_ring_classes_plan, make_mesh_classes_plan),
// simulated by the simulator of simulator.hpp, with:
//   - each representative's transfer posted to the GPU of the rank it reaches in the full
//     plan (RankShiftSymmetry::full_destination), not to the representative that receives it;
//   - each flow over the orbit representatives of its links with its class's multiplicity,
//     and its GPU traffic counted on the representative GPUs (flow_transfer_model.hpp);
//   - the result expanded to all P ranks: rank r's totals are those of r mod K, and the
//     event count is K's times P / K (every copy of a class schedules the same events).
// Exact to the picosecond where the symmetry holds (tests/test_symmetric_simulation.cpp,
// tests/test_mesh_symmetry.cpp). A role quotient (rank_roles.hpp, RankShiftSymmetry::roles) runs
// through the same code: there the other blocks are not images of the simulated one, and the
// result approximates theirs.
#pragma once

#include "sim/model/calibration_profile.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/model/simulator.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/windowed_tracker.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// quotient.ranks must equal symmetry.classes (std::invalid_argument otherwise). Per-op and
// per-transfer records are not kept (they would be a representative's only).
// record_route_busy: route_busy_ps of the representatives' transfers only, keyed by the GPUs
// they run between in the full ring; every other route is the image of one of them under the
// shift and has the same sum (the tuner's bound analysis takes the largest; under a role
// quotient the other blocks' routes are not images, and the representatives' are the slowest).
// stop_after_ps: SimulationOptions::stop_after_ps (the full ring's times: the quotient's).
SimulationResult simulate_classes(const Plan& quotient, const RingSymmetry& symmetry,
                                  const Topology& topology, const CalibrationProfile& profile,
                                  bool record_route_busy = false,
                                  Picoseconds stop_after_ps = kNeverStop);

// The same with `options`: record_transfers keeps the representatives' transfers (a recv's
// rank is the quotient's; its GPU is full_placement[full_destination(send, recv)]), which
// every other transfer of the full run repeats on the image of their route (the job's link
// loads expand them: sim/job/link_loads.hpp). record_ops, record_link_samples and a placement
// need every rank: std::invalid_argument.
SimulationResult simulate_classes(const Plan& quotient, const RingSymmetry& symmetry,
                                  const Topology& topology, const CalibrationProfile& profile,
                                  const SimulationOptions& options);

// The same over a quotient generated as it runs (sim/plan/windowed_tracker.hpp; the ring
// family's source is ring_classes_source.hpp): the same result, with the quotient's programs
// held the source's lookahead_ops() ahead of each representative's first unfinished op.
SimulationResult simulate_classes_windowed(ProgramSource& source, const RingSymmetry& symmetry,
                                           const Topology& topology,
                                           const CalibrationProfile& profile,
                                           bool record_route_busy = false,
                                           Picoseconds stop_after_ps = kNeverStop);

}  // namespace tilesim
