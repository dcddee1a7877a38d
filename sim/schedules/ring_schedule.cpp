#include "sim/schedules/ring_schedule.hpp"

#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/ring_passes.hpp"

namespace tilesim {
namespace {

// Member r of the one ring: rank r with its own chunk's query and key items.
std::vector<RingMember> ring_members(const AttentionObjects& objs, int ranks, bool bwd) {
  std::vector<RingMember> ring;
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    RingQuery q{
        r, objs.q[i], objs.o[i], objs.lse[i], bwd ? objs.d_o[i] : -1, bwd ? objs.dq[i] : -1};
    RingKey key{r, objs.kv[i], bwd ? objs.dkv[i] : -1};
    ring.push_back(RingMember{r, {q}, {key}});
  }
  return ring;
}

}  // namespace

Plan make_pass_kv_ring_plan(std::string schedule, const AttentionShape& shape, int ranks,
                            ChunkOwnership ownership) {
  Plan plan = make_chunked_plan(std::move(schedule), shape, ranks, ownership);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  const bool bwd = shape.has_backward();
  const std::vector<RingMember> ring = ring_members(objs, ranks, bwd);
  CommGroups groups(ranks);
  if (shape.has_forward()) add_ring_forward(plan, ring, groups);
  if (bwd) add_ring_backward(plan, ring, groups, -1, shape.has_forward());
  return plan;
}

Plan make_pass_kv_ring_classes_plan(std::string schedule, const AttentionShape& shape, int ranks,
                                    ChunkOwnership ownership, int classes) {
  Plan plan = make_chunked_plan(std::move(schedule), shape, ranks, ownership);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  const std::vector<RingMember> ring = ring_members(objs, ranks, shape.has_backward());
  CommGroups groups(ranks);
  if (shape.has_forward()) add_ring_forward_classes(plan, ring, classes, groups);
  if (shape.has_backward()) add_ring_backward(plan, ring, groups, classes, shape.has_forward());
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_ring_plan(const AttentionShape& shape, int ranks) {
  return make_pass_kv_ring_plan("ring", shape, ranks, ChunkOwnership::contiguous);
}

}  // namespace tilesim
