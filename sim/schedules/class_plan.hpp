// Quotient plans for symmetric simulation (sim/model/symmetric_simulation.hpp).
//
// A generator whose programs are equivariant under a shift of ranks by K (rank r + K runs rank
// r's program with every rank and chunk index moved by K) emits the programs of ranks 0..K-1
// only, naming their peers as full ranks. Two ways to turn them into a quotient:
//   - fold_onto_classes keeps those K programs and renames every send's and recv's peer d to
//     d mod K, the representative that plays d (its transfer still goes to d's GPU:
//     RankShiftSymmetry::full_destination). It needs the peers of a representative to fold
//     onto different representatives, none of them itself (ring, mesh, double ring, USP).
//   - keep_class_programs keeps the K programs with their full peers: an offset quotient, for
//   schedules in which every rank sends to every other (pass-Q,
//     all-gather KV, Ulysses). The tracker pairs the send at offset t = (d - s) mod P of class
//     s with the recv at offset t of class (s + t) mod K (plan_tracker.hpp), which may be s
//     itself; the transfer goes to the GPU of the full peer d.
// The chunks and objects of all ranks stay; those homed on ranks >= K are never live.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

// plan.programs must hold at least `classes` programs (those beyond are dropped); sets
// plan.ranks = classes.
void fold_onto_classes(Plan& plan, int classes);

// plan.ranks = P must be a multiple of `classes`, with at least `classes` programs (those
// beyond are dropped); sets plan.ranks = classes. Its peers are ranks of the P-rank plan: a
// tracker reads them with PlanTracker(plan, P), the simulator with a RankShiftSymmetry whose
// peers_by_offset is set.
void keep_class_programs(Plan& plan, int classes);

}  // namespace tilesim
