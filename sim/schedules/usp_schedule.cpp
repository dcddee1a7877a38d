#include "sim/schedules/usp_schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "sim/plan/comm_groups.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/schedules/usp_grid.hpp"

namespace tilesim {
namespace {

// The programs of the ranks of Ulysses groups 0..emit_groups-1 (all r groups: the full plan;
// fewer: a quotient plan's, peers still the full plan's ranks).
// first_rank: the plan relabelled r -> r - first_rank (make_usp_grid_plan).
Plan build_grid(std::string name, const AttentionShape& shape, int ranks, int u, int emit_groups,
                int first_rank = 0) {
  const UspGrid grid = usp_grid(shape, ranks, u, name);
  if (emit_groups < 0) emit_groups = grid.r;
  UspHeadObjects objs;
  Plan plan = make_usp_grid_plan(std::move(name), shape, ranks, grid, objs, first_rank);
  const bool fwd = shape.has_forward();
  const bool bwd = shape.has_backward();
  CommGroups groups(ranks);
  // Rank by rank, the code the lazy and step-wise runs emit piece by piece
  // (usp_classes_source.hpp).
  FusingScratch scratch;
  std::vector<std::vector<RingMember>> rings;
  std::vector<UspRingSteps> steps;
  for (int h = 0; h < u; ++h) {
    rings.push_back(usp_head_ring(plan, grid, objs, h));
    steps.push_back(usp_ring_steps(plan, rings.back()));
  }
  for (int x = 0; fwd && x < emit_groups * u; ++x) {
    const auto h = static_cast<std::size_t>(x % u);
    usp_forward_rank(plan, groups, scratch, rings[h], steps[h], grid, objs, x, emit_groups);
  }
  for (int x = 0; bwd && x < emit_groups * u; ++x) {
    const auto h = static_cast<std::size_t>(x % u);
    usp_backward_rank(plan, groups, scratch, rings[h], steps[h], grid, objs, x);
  }
  return plan;
}

}  // namespace

Plan make_usp_plan(const AttentionShape& shape, int ranks, int ulysses_degree) {
  return build_grid("usp", shape, ranks, ulysses_degree, -1);
}

Plan make_usp_classes_plan(const AttentionShape& shape, int ranks, int ulysses_degree, int classes,
                           int first_rank) {
  const int u = ulysses_degree;
  if (u < 1 || classes < 2 * u || classes % u != 0 || ranks % classes != 0 || first_rank < 0 ||
      first_rank >= ranks || first_rank % u != 0) {
    throw std::invalid_argument(fmt::format(
        "a USP quotient plan takes classes a multiple of 2 x u = {} dividing {}, and a first "
        "rank a multiple of u",
        2 * u, ranks));
  }
  Plan plan = build_grid("usp", shape, ranks, u, classes / u, first_rank);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_ulysses_plan(const AttentionShape& shape, int ranks) {
  return build_grid("ulysses", shape, ranks, ranks, -1);
}

}  // namespace tilesim
