#include "sim/schedules/pass_q_schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/pass_q_member.hpp"

namespace tilesim {
namespace {

// The programs of ranks 0..emit-1 of the P-rank plan, each rank's steps in order.
Plan build_pass_q(const AttentionShape& shape, int ranks, int emit) {
  Plan plan = pass_q_layout(shape, ranks);
  const AttentionObjects objs = add_attention_objects(plan);
  const PassQPartials partials = add_pass_q_partials(plan);
  const QRoute route = route_q(plan);
  CommGroups groups(ranks);
  for (int r = 0; r < emit; ++r) {
    PassQMember member(plan, groups, objs, partials, route, r);
    while (!member.done()) member.emit_step();
  }
  return plan;
}

}  // namespace

Plan make_pass_q_plan(const AttentionShape& shape, int ranks) {
  return build_pass_q(shape, ranks, ranks);
}

Plan make_pass_q_classes_plan(const AttentionShape& shape, int ranks, int classes) {
  if (classes < 1 || classes >= ranks || ranks % classes != 0) {
    throw std::invalid_argument(
        fmt::format("a pass-Q quotient plan takes classes dividing {}, below it", ranks));
  }
  Plan plan = build_pass_q(shape, ranks, classes);
  keep_class_programs(plan, classes);
  return plan;
}

}  // namespace tilesim
