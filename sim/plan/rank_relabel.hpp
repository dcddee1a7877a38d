// Renumbering a plan's ranks: rank r becomes new_rank[r] (a permutation of 0..P-1).
//
// A generator that builds programs by geometric position (a mesh's tile positions) and numbers
// the plan's ranks otherwise (a mesh may number them column by column, so that its rotation
// symmetry is a shift of the rank index: mesh_placement.hpp) builds the
// programs at their positions and relabels them here: program r moves to new_rank[r], every
// send's and recv's peer p becomes new_rank[p], every chunk's owner and object's home rank
// likewise, and a placement (rank -> GPU) keeps each program on its GPU. Object names are left
// as they are: a generator that names copies by rank ("O[3]@5") names them by the new ranks.
// Programs not built (a quotient plan's ranks beyond its representatives) move as empty ones.
#pragma once

#include <span>

#include "sim/plan/plan.hpp"

namespace tilesim {

// std::invalid_argument unless new_rank is a permutation of the plan's ranks.
void relabel_ranks(Plan& plan, std::span<const int> new_rank);

}  // namespace tilesim
