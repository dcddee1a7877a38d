// Quotient plans for symmetric simulation (sim/model/symmetric_simulation.hpp).
//
// A generator whose programs are equivariant under a shift of ranks by K (rank r + K runs rank
// r's program with every rank and chunk index moved by K) emits the programs of ranks 0..K-1
// only, naming their peers as full ranks; fold_onto_classes then keeps those K programs and
// renames every send's and recv's peer d to d mod K, the representative that plays d (its
// transfer still goes to d's GPU: RankShiftSymmetry::full_destination). The chunks and
// objects of all ranks stay; those homed on ranks >= K are never live.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

// plan.programs must hold at least `classes` programs (those beyond are dropped); sets
// plan.ranks = classes.
void fold_onto_classes(Plan& plan, int classes);

}  // namespace tilesim
