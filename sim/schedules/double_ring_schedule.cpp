#include "sim/schedules/double_ring_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/double_ring_member.hpp"

namespace tilesim {

namespace {

// The programs of ranks 0..emit_ranks-1, every step of each (peers are the full plan's ranks).
void add_double_ring_programs(Plan& plan, int inner, int emit_ranks) {
  const AttentionObjects objs = add_attention_objects(plan);
  CommGroups groups(plan.ranks);
  // One chunk-pair scan for both passes: the backward's dKV follows the forward's KV.
  const KvReach reach = kv_reach(plan, inner);
  for (int p = 0; p < emit_ranks; ++p) {
    DoubleRingMember member(plan, groups, objs, reach, p);
    while (!member.done()) member.emit_step();
  }
}

}  // namespace

Plan make_double_ring_classes_plan(const AttentionShape& shape, int ranks, int inner, int classes,
                                   int first_rank) {
  check_double_ring_inner(ranks, inner);
  if (classes < 1 || ranks % classes != 0 || classes % inner != 0 || first_rank % classes != 0) {
    throw std::invalid_argument(fmt::format(
        "a double-ring quotient plan takes classes a multiple of inner = {} dividing {}", inner,
        ranks));
  }
  Plan plan = double_ring_layout(shape, ranks);
  rotate_chunk_contents(plan, first_rank);
  add_double_ring_programs(plan, inner, classes);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner) {
  check_double_ring_inner(ranks, inner);
  Plan plan = double_ring_layout(shape, ranks);
  add_double_ring_programs(plan, inner, ranks);
  return plan;
}

}  // namespace tilesim
