// Symmetric simulation of the ring family, the mesh, the double ring, USP, pass-Q and
// all-gather KV
// (schedule.symmetry: auto, the default; off, or `simulate --no-symmetry`, simulates every
// rank).
//
// Where it is exact, `simulate` runs a quotient plan: the programs of one rank per class of
// a shift symmetry (sim/model/rank_shift_symmetry.hpp), O(K x P) ops for K classes of the
// ring instead of O(P^2), and expands the per-rank totals to all P ranks
// (symmetric_simulation.hpp). It applies to schedule ring, zigzag or striped (peer r + 1,
// every shift), mesh with a tile given or chosen by fewest bytes (peers q_next and kv_next,
// shifts by whole Q-groups), double_ring (inner and outer successors, shifts by whole inner
// rings) and usp with at least two Ulysses groups (the group's other members and the next
// group's member of its head group, shifts by whole Ulysses groups, at least two of them);
// forward, backward or both; the full mask (every block then costs the same, so the program
// of rank r + K is that of rank r shifted: causal and windowed masks give ranks different
// work and stay on the full simulation, but for the approximate work-block quotient of causal
// zigzag, striped, double ring, USP, mesh and all-gather KV, work_block_applies); one CP group
// (no job); and a topology
// and placement
// on which some shift by K < P ranks maps the routes of every rank's peers onto themselves.
// pass_q (forward; it has no backward) and allgather_kv owned by the layout, in which
// every rank sends to every other (pass-Q's partials go to each owner r - s; the all-gather and
// the all-to-all are one group of all ranks), run an offset quotient (class_plan.hpp
// keep_class_programs): the representatives keep their full peers, the tracker pairs a send at
// offset t of class s with the recv at offset t of class (s + t) mod K, and the shift must map
// the routes between every pair of ranks. Not ulysses: its quotient was not exact (peak
// memory at 256 GPUs): its programs list head chunks by absolute index, not by offset.
// Pass-Q's causal mask is not an exact shift: with zigzag chunks the chunk rank r meets at step
// s lies before or after its own depending on whether r - s wraps, so ranks r and r + K run
// calls of different shapes at one step (2 query blocks x 1 key block, or 1 x 2), and the call
// efficiency and CTA tile work the compute model charges differ; nor is the work-block
// quotient close (work_block_applies says why), so every rank runs.
// Elsewhere the full plan runs; the result JSON says which
// (`symmetry: {classes, exact}`, present wherever symmetry applies and is on).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/model/calibration_profile.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/plan/plan.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/schedules/double_ring_source.hpp"
#include "sim/schedules/ring_classes_source.hpp"
#include "sim/schedules/usp_classes_source.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

// USP's Ulysses degree where a shift by whole Ulysses groups can be a symmetry (at least two
// groups, and a degree the generator accepts: else it names the error on the full path), 0
// otherwise. Ulysses alone (one group of all P ranks) never shifts: every rank is a peer of
// every other in its all-to-all, so some peer of a representative lies in its own class.
int usp_shift_degree(const Scenario& scenario);

// schedule.symmetry: off (or `--no-symmetry`): every rank simulated, a job's groups included.
bool symmetry_switched_off(const Scenario& scenario);

// Causal ring (contiguous), zigzag, striped (over the layout's chunks), double ring, USP of two or
// more Ulysses groups, mesh with a known tile and all-gather KV (zigzag chunks; all-gather KV with
// balance: layout), one CP group, run a work-block quotient (rank_shift_symmetry.hpp
// WorkApproximation): their transfers are the full mask's, so the full mask's quotient applies, but
// rank r runs r calls of one shape and P - 1 - r of the other (all-gather KV: one call, the same
// work on every rank, so its spread is whatever the compute model makes of the chunks' positions;
// the mesh: a mix set by the rank's Q and KV positions); the representatives run the programs of
// the end block holding the rank with the most compute (rank 0 or P - 1 where compute is affine in
// r; for the mesh, whose compute is not, the end blocks are costed whole), which every block is
// costed as. Under schedule.symmetry roles, or auto beyond kAutoExactWorkRanks GPUs (up to that
// many, auto simulates every rank). The contiguous ring's rank r runs r + 1 calls (max/mean -> 2):
// its heaviest block, ranks P - K..P - 1, sets the ring's pace, and its compute balance comes from
// every rank's FLOPs (affine in r: WorkApproximation::end_rank_flops). Measured against every rank:
// docs/design-notes.md, "Work-block quotient".
inline constexpr int kAutoExactWorkRanks = 256;
bool work_block_applies(const Scenario& scenario);

// The scenario allows a symmetric run (schedule, shape, no job, schedule.symmetry not off),
// before the topology is known.
bool symmetry_applies(const Scenario& scenario);
// A mesh whose tile is chosen by simulating the candidates (resolve_mesh_tile), where a tile
// given would allow a symmetric run: each candidate then runs as a quotient.
bool searched_mesh_tiles_symmetric(const Scenario& scenario);

// The shift symmetry of the scenario's schedule on `topology`, or nullopt where symmetry does
// not apply; exact() says whether a quotient plan can run (a role quotient's, with roles set,
// approximate). schedule.symmetry:
//   exact: the exact shift quotient where one exists.
//   roles: (sim/model/rank_roles.hpp), for the schedules with a peer-shift quotient (ring,
//     zigzag, striped, USP of two or more groups, double ring, mesh with a known tile, and
//     all-gather KV's NCCL rings) under the full mask, one CP group: an exact shift no larger
//     than the role blocks where there is one, else the role quotient where its checks hold;
//     anywhere else exact's choice, and `warning` says why.
//   auto (the default): exact's choice where it has at most kAutoExactClasses classes
//     (kAutoExactCollectiveClasses for all-gather KV's NCCL rings) (or
//     none exists and roles cannot apply either), else the role quotient, with `warning`
//     saying so. The exact quotient's cost grows as classes x P (a ring's 1024 classes
//     beyond one pod of the H100 cluster: 25 s at 2048 GPUs, 54 s at 4096, where 256 classes
//     at 1024 take 1 s); the role quotient's as K x P with K one or two nodes' ranks.
//   off: every rank.
inline constexpr int kAutoExactClasses = 256;
// All-gather KV's NCCL rings: auto's limit on the exact quotient's classes is lower. A
// cross-node ring step runs over every lane of the node (collective_lanes.hpp), whose NVLink
// legs share links with the node's other ring steps, so every class's flows form one
// component of the flow network, and each flow's end re-solves O(K) flows: the run grows as
// K^2 x P, not K x P. Measured (1M tokens, full mask, `simulate ... --set
// schedule.kind=allgather_kv`): 256 classes took 14 s at 512 GPUs and 27 s at 1024 (165,000
// re-solves of about 265 flows at 512), where the role quotient took 0.03 s and 0.06 s,
// within +0.29% and +0.71% of them. At 64 classes the K^2 growth puts the exact run at a
// sixteenth of that.
inline constexpr int kAutoExactCollectiveClasses = 64;
// The double ring's quotient runs generated as it runs (double_ring_source.hpp) where it has
// more than this many classes, else built whole. A whole quotient holds K programs of O(P) ops:
// up to 64 classes that is a role quotient's size, O(P); the double ring's exact quotients with
// inner rings of 256 ranks and more have 512-1024 classes on 4096 GPUs (2.7 and 5.5 GB built
// whole, both passes; inner 1024: 13.5 GiB, refused), O(P^2). Below it the whole quotient is
// kept because the windowed tracker costs more time per op: 0.56 s -> 0.76 s for the default
// inner ring (16 classes) on 4096 GPUs, both passes, 1.4-1.6x on the large quotients
// (docs/design-notes.md, "The double ring's quotient generated as it runs").
inline constexpr int kWholeDoubleRingMaxClasses = 64;
struct SymmetryChoice {
  std::optional<RingSymmetry> symmetry;
  std::string warning;  // for the result's warnings; empty where the run is what was asked
};
SymmetryChoice choose_symmetry(const Scenario& scenario, const Topology& topology,
                               const CalibrationProfile& profile);
std::optional<RingSymmetry> scenario_symmetry(const Scenario& scenario, const Topology& topology,
                                              const CalibrationProfile& profile);

// The resource guard (resource_guard.hpp estimate_symmetric_plan) for the quotient plan of
// `classes` classes: its ops (against --max-ops) and memory: the ring family's and USP's
// forward quotients run windowed (kWindowedOpsPerClass per class, u times that for USP, whose
// pieces are u ring steps), the others are held whole; either holds the objects of all P
// ranks, and the symmetry search has routed every rank's peers (P (P - 1) pairs for pass-Q and
// all-gather KV). classes = 0: before the search, the least any symmetric run of the shape
// needs (one class); at_least: `classes` is a lower bound (all_peers_classes_lower_bound), as
// the message says. InputError at schedule.gpus when it passes the scenario's limits.
void check_symmetric_plan_resources(const Scenario& scenario, int classes, bool at_least = false);
// The same check's message, empty where the run fits; classes = P is every rank's program
// generated as it runs (lazy_plan.hpp).
std::string windowed_plan_violation(const Scenario& scenario, int classes, bool at_least = false);
// The estimate that check judges: the quotient of `classes` classes, windowed or whole as it
// runs.
PlanEstimate symmetric_run_estimate(const Scenario& scenario, int classes);

// A run estimated to take more than kLongSimulationS of simulation: the guard's estimate
// (resource_guard.hpp: kSimSecondsPerOp, measured on a 2-core host, times the ops of what
// runs), so that `simulate` can say so before it starts instead of running silently for
// minutes (pass-Q on 16384 GPUs: its exact quotient of 1024 classes, 2.2e8 ops). The notice
// names the run and the estimate, empty for a shorter run. classes: the quotient's (at_least:
// a lower bound, before the symmetry search, which then routes every rank's peers), or
// schedule.gpus for every rank.
inline constexpr double kLongSimulationS = 60.0;
std::string long_simulation_notice(const Scenario& scenario, int classes, bool at_least = false);

// pass-Q and all-gather KV (every rank sends to every other): a lower bound on the classes of
// their exact quotient, from the shift search over each rank's ring successor alone (P routes,
// where the quotient's own search routes P (P - 1) pairs and holds them: 2 GiB and 40 s on 4096
// GPUs). 0 for the other schedules, where no symmetric run applies, where the successors
// admit no shift either (then neither has a quotient), or where all-gather KV's rings may run
// on the role quotient instead (schedule.symmetry auto or roles).
int all_peers_classes_lower_bound(const Scenario& scenario, const Topology& topology,
                                  const CalibrationProfile& profile);

// The chunk ownership of ring, zigzag or striped as make_pass_kv_ring_plan lays it out;
// nullopt for another kind or balance: work (blocks dealt by work).
std::optional<ChunkOwnership> ring_ownership(const ScheduleSpec& spec);

// The quotient plan of an exact symmetry, with the scenario's output correction.
Plan build_symmetric_plan(const Scenario& scenario, const RingSymmetry& symmetry);

// The same quotient generated a step at a time (ring_classes_source.hpp) for the ring family
// (ring, zigzag, striped) forward; null for the backward and the other schedules.
std::unique_ptr<RingClassesSource> symmetric_ring_source(const Scenario& scenario,
                                                         const RingSymmetry& symmetry);
// USP's forward quotient generated a piece at a time (usp_classes_source.hpp); null for another
// schedule or a pass with a backward, whose quotient is built whole.
std::unique_ptr<UspClassesSource> symmetric_usp_source(const Scenario& scenario,
                                                       const RingSymmetry& symmetry);
// The double ring's quotient, forward, backward or both, generated an inner step at a time
// (double_ring_source.hpp), whatever its classes; null for another schedule or one class per
// rank. symmetric_source takes it beyond kWholeDoubleRingMaxClasses classes.
std::unique_ptr<DoubleRingSource> symmetric_double_ring_source(const Scenario& scenario,
                                                               const RingSymmetry& symmetry);
// The double ring's quotient that symmetric_source generates as it runs: K < P classes, more
// than kWholeDoubleRingMaxClasses. Its whole plan (~6 P^2 ops) is what the source avoids
// building, so tune sums its compute term from the source.
bool windowed_double_ring_quotient(const Scenario& scenario, const RingSymmetry& symmetry);
// Whichever applies (the ring family's, the double ring's, pass-Q's or USP's forward;
// pass_q_source.hpp for pass-Q's offset quotient), else null: the quotient is then built whole
// (build_symmetric_plan): the mesh's, and the backward of the ring family and USP.
std::unique_ptr<ProgramSource> symmetric_source(const Scenario& scenario,
                                                const RingSymmetry& symmetry);

// Ops of the full plan, from its quotient: rank r's program is that of r mod K, so the full
// plan holds P / K copies of every quotient op.
std::size_t full_ring_ops(const Plan& quotient, const RingSymmetry& symmetry);

// result_to_json of a quotient describes the full plan: gpus = P, ops = the full plan's (every
// rank's program has the same ops), and symmetry: {classes, exact: true}. plan_digest stays
// the quotient's (the full plan is never built).
void describe_full_ring(nlohmann::ordered_json& json, const Plan& quotient,
                        const RingSymmetry& symmetry);

}  // namespace tilesim
