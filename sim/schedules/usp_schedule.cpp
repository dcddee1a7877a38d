#include "sim/schedules/usp_schedule.hpp"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/pairwise_exchange.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/schedules/usp_grid.hpp"

namespace tilesim {
namespace {

// All-to-alls and frees over the ranks of Ulysses groups 0..emit_groups-1, rank by rank.
void group_all_to_all(Plan& plan, CommGroups& groups, const UspGrid& grid, int emit_groups,
                      const UspExchangeObjects& objects) {
  for (int x = 0; x < emit_groups * grid.u; ++x)
    usp_exchange_member(plan, groups, grid, x, objects);
}

void free_foreign(Plan& plan, const UspGrid& grid, int emit_groups,
                  const std::function<std::vector<int>(int)>& pick) {
  for (int x = 0; x < emit_groups * grid.u; ++x) usp_free_foreign(plan, grid, x, pick);
}

// On every owner p of groups 0..emit_groups-1, sums the replicas' dKV[p, h] into dKV[p, h - h %
// rep] (one merge op).
void sum_replicated_dkv(Plan& plan, const UspGrid& grid, int emit_groups,
                        const UspHeadObjects& objs) {
  if (grid.rep == 1) return;
  ProgramBuilder build(plan);
  for (int p = 0; p < emit_groups * grid.u; ++p) {
    std::vector<int> targets, partials;
    for (int h = 0; h < grid.u; h += grid.rep) {
      targets.push_back(usp_object(objs.dkv, grid.chunk(p, h)));
      for (int c = 1; c < grid.rep; ++c)
        partials.push_back(usp_object(objs.dkv, grid.chunk(p, h + c)));
    }
    build.merge(p, partials, targets);
    for (int obj : partials) build.free(p, obj);
  }
}

// The programs of the ranks of Ulysses groups 0..emit_groups-1 (all r groups: the full plan;
// fewer: a quotient plan's, peers still the full plan's ranks).
Plan build_grid(std::string name, const AttentionShape& shape, int ranks, int u, int emit_groups) {
  const UspGrid grid = usp_grid(shape, ranks, u, name);
  if (emit_groups < 0) emit_groups = grid.r;
  UspHeadObjects objs;
  Plan plan = make_usp_grid_plan(std::move(name), shape, ranks, grid, objs);
  const bool fwd = shape.has_forward();
  const bool bwd = shape.has_backward();
  CommGroups groups(ranks);
  // Chunk of rank p for the head group of rank y.
  auto chunk_for = [&](int p, int y) { return grid.chunk(p, y % u); };
  if (fwd) {
    // Rank by rank, the code the step-wise quotient runs piece by piece (usp_classes_source.hpp).
    FusingScratch scratch;
    std::vector<std::vector<RingMember>> rings;
    std::vector<UspRingSteps> steps;
    for (int h = 0; h < u; ++h) {
      rings.push_back(usp_head_ring(plan, grid, objs, h));
      steps.push_back(usp_ring_steps(plan, rings.back()));
    }
    for (int x = 0; x < emit_groups * u; ++x) {
      const auto h = static_cast<std::size_t>(x % u);
      usp_forward_rank(plan, groups, scratch, rings[h], steps[h], grid, objs, x, emit_groups);
    }
  }
  if (bwd) {
    group_all_to_all(plan, groups, grid, emit_groups, [&](int from, int to) {
      return std::vector<int>{usp_object(objs.d_o, chunk_for(from, to))};
    });
    for (int h = 0; h < u; ++h) {
      add_ring_backward(plan, usp_head_ring(plan, grid, objs, h), groups, emit_groups);
    }
    group_all_to_all(plan, groups, grid, emit_groups, [&](int from, int to) {
      const int i = chunk_for(to, from);
      return std::vector<int>{usp_object(objs.dq, i), usp_object(objs.dkv, i)};
    });
    free_foreign(plan, grid, emit_groups, [&](int i) {
      return std::vector<int>{usp_object(objs.dq, i),  usp_object(objs.dkv, i),
                              usp_object(objs.d_o, i), usp_object(objs.q, i),
                              usp_object(objs.kv, i),  usp_object(objs.o, i)};
    });
    sum_replicated_dkv(plan, grid, emit_groups, objs);
  }
  return plan;
}

}  // namespace

Plan make_usp_plan(const AttentionShape& shape, int ranks, int ulysses_degree) {
  return build_grid("usp", shape, ranks, ulysses_degree, -1);
}

Plan make_usp_classes_plan(const AttentionShape& shape, int ranks, int ulysses_degree,
                           int classes) {
  const int u = ulysses_degree;
  if (u < 1 || classes < 2 * u || classes % u != 0 || ranks % classes != 0) {
    throw std::invalid_argument(fmt::format(
        "a USP quotient plan takes classes a multiple of 2 x u = {} dividing {}", 2 * u, ranks));
  }
  Plan plan = build_grid("usp", shape, ranks, u, classes / u);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_ulysses_plan(const AttentionShape& shape, int ranks) {
  return build_grid("ulysses", shape, ranks, ranks, -1);
}

}  // namespace tilesim
