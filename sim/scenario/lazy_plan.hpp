// Every rank's program generated as it runs, for the runs no shift symmetry covers
// (causal and windowed masks, topologies without one, `symmetry: off`): the windowed sources of
// the symmetric path with K = P classes, which is the full plan itself (the ring's member P - 1
// sends to member 0; USP's last Ulysses group's ring hop goes to the first), simulated through
// the windowed tracker (issue 13, item 1). `simulate` then holds the chunks and objects of the
// P ranks and a window of ops per rank, O(P x window), instead of the whole plan (ring: ~6 P^2
// ops of ~112 bytes, 10.8 GiB for zigzag on 4096 GPUs); the simulated ops, and so the time,
// stay those of the whole plan.
//
// Same plan as make_plan, for:
//   - ring and striped under every mask, zigzag under the full and causal masks
//     (RingClassesSource; under a window or documents zigzag takes its two-direction ring, which
//     the source does not generate); not `balance: work` (blocks dealt by work); forward,
//     backward or both (a member's backward waits for its forward's last exchange,
//     ring_passes.hpp, so its first call is generated before it can start);
//   - USP with two or more Ulysses groups under the full and causal masks (UspClassesSource;
//     under a window or documents its rings route keys by their readers, and the tracker's
//     window no longer sees each op before its prerequisites finish); forward, backward or
//     both (its backward opens with the all-to-all of dO, which its first call waits for);
//   - the double ring under every mask (DoubleRingSource), where its inner ring divides the
//     GPUs; both passes only under the full and causal masks (double_ring_generated);
//   - pass-Q under every mask (PassQSource; it has a forward only);
// one CP group; not a run that needs every op (a trace, op records,
// --full-check). The ops, object ids and plan_digest are the whole plan's, so the result JSON is
// byte-identical (tests/test_lazy_plan.cpp). `simulate` takes this path beyond
// kFullCheckMaxRanks ranks only, where the whole plan would get the structural check and no
// validator dry run either (prepared_scenario.hpp); up to it the whole plan is built and
// validated. `compare` and `tune` run such candidates the same way.
#pragma once

#include <memory>
#include <string>

#include "sim/plan/windowed_tracker.hpp"
#include "sim/scenario/scenario.hpp"

namespace tilesim {

// The double ring's plan is one DoubleRingSource generates: its inner ring divides the GPUs,
// and not both passes under a mask that leaves pairs empty (a rank may then relay KV for many
// steps after its last forward call, which is all its backward's first call waits for: the
// window would generate that call after its prerequisite finished).
bool double_ring_generated(const Scenario& scenario);

// The scenario's plan is one a lazy source generates (any size).
bool lazy_generates(const Scenario& scenario);

// `simulate` runs it lazily: lazy_generates, one CP group, beyond kFullCheckMaxRanks.
bool lazy_runs(const Scenario& scenario);

// The source of every rank's program; std::invalid_argument unless lazy_generates.
std::unique_ptr<ProgramSource> make_lazy_source(const Scenario& scenario);

// The resource guard for a lazy run: the full plan's ops (against --max-ops; they are all
// simulated) and the memory of all P ranks' objects and a window of ops per rank. Empty when
// it fits scenario.limits, else what it needs and which limit it passes.
std::string lazy_violation(const Scenario& scenario);
// The same as the scenario's InputError at schedule.gpus.
void check_lazy_resources(const Scenario& scenario);

}  // namespace tilesim
