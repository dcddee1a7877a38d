// The ring family's forward plan of every rank generated as it runs, for the runs no shift
// symmetry covers (causal and windowed masks, topologies without one, `symmetry: off`): the
// RingClassesSource of all P ranks (K = P classes is the full ring itself) simulated through the
// windowed tracker (issue 13, item 1). `simulate` then holds the chunks and objects of the P
// ranks and a window of ops per rank, O(P x window), instead of the whole plan's ~6 P^2 ops
// (P^2 x 112 bytes: 10.8 GiB for zigzag on 4096 GPUs); the simulated ops, and so the time, stay
// O(P^2).
//
// Same plan as make_plan: ring and striped always (make_pass_kv_ring_plan), zigzag except
// under a sliding window or documents (its two-direction ring); not `balance: work`, a job, a
// backward, or a run that needs every op (a trace, op records, --full-check). The ops, object
// ids and plan_digest are the whole plan's, so the result JSON is byte-identical
// (tests/test_lazy_ring.cpp). `simulate` takes this path beyond kFullCheckMaxRanks ranks only,
// where the whole plan would get the structural check and no validator dry run either
// (prepared_scenario.hpp); up to it the whole plan is built and validated.
#pragma once

#include <memory>
#include <string>

#include "sim/scenario/scenario.hpp"
#include "sim/schedules/ring_classes_source.hpp"

namespace tilesim {

// The scenario's plan is one the lazy source generates (any size).
bool lazy_ring_generates(const Scenario& scenario);

// `simulate` runs it lazily: lazy_ring_generates, one CP group, beyond kFullCheckMaxRanks.
bool lazy_ring_runs(const Scenario& scenario);

// The source of every rank's program; std::invalid_argument unless lazy_ring_generates.
std::unique_ptr<RingClassesSource> make_lazy_ring_source(const Scenario& scenario);

// The resource guard for a lazy run: the full plan's ops (against --max-ops; they are all
// simulated) and the memory of all P ranks' objects and a window of ops per rank. Empty when
// it fits scenario.limits, else what it needs and which limit it passes.
std::string lazy_ring_violation(const Scenario& scenario);
// The same as the scenario's InputError at schedule.gpus.
void check_lazy_ring_resources(const Scenario& scenario);

}  // namespace tilesim
