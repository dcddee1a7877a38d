// The plan's shape before its meaning: every id an op, object or chunk holds points at
// something that exists (ranks, objects, chunks, blocks, earlier ops), enums hold one of their
// values and sizes are finite. The validator runs this first and, when it fails, reports these
// errors alone: its other checks index by these ids and assume them in range. So a corrupted
// plan (a bug in a generator, a fuzzed plan) is reported, never read out of bounds.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

// Empty when every reference is in range; else at most `max_errors` messages, each naming the
// op (rank, index), object or chunk.
std::vector<std::string> plan_structure_errors(const Plan& plan, std::size_t max_errors = 20);

}  // namespace tilesim
