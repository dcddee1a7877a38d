#include "sim/schedules/ring_schedule.hpp"

#include <stdexcept>

#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/ring_passes.hpp"

namespace tilesim {

void relabel_ranks_from(Plan& plan, int first_rank) {
  const int p = plan.ranks;
  if (first_rank == 0) return;
  if (first_rank < 0 || first_rank >= p || plan.op_count() > 0) {
    throw std::invalid_argument(
        "relabel_ranks_from: a first rank of the plan, before its programs");
  }
  const auto moved = [&](int r) { return (r - first_rank + p) % p; };
  for (Chunk& chunk : plan.chunks) chunk.owner = moved(chunk.owner);
  for (DataObject& object : plan.objects) object.home_rank = moved(object.home_rank);
}

std::vector<RingMember> ring_members(const Plan& plan, const AttentionObjects& objs, bool bwd) {
  std::vector<RingMember> ring(static_cast<std::size_t>(plan.ranks));
  for (int c = 0; c < static_cast<int>(plan.chunks.size()); ++c) {
    const auto i = static_cast<std::size_t>(c);
    const int r = plan.chunks[i].owner;
    const RingQuery q{
        c, objs.q[i], objs.o[i], objs.lse[i], bwd ? objs.d_o[i] : -1, bwd ? objs.dq[i] : -1};
    ring[static_cast<std::size_t>(r)] =
        RingMember{r, {q}, {RingKey{c, objs.kv[i], bwd ? objs.dkv[i] : -1}}};
  }
  return ring;
}

Plan make_pass_kv_ring_plan(std::string schedule, const AttentionShape& shape, int ranks,
                            ChunkOwnership ownership) {
  Plan plan = make_chunked_plan(std::move(schedule), shape, ranks, ownership);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  const bool bwd = shape.has_backward();
  const std::vector<RingMember> ring = ring_members(plan, objs, bwd);
  CommGroups groups(ranks);
  if (shape.has_forward()) add_ring_forward(plan, ring, groups);
  if (bwd) add_ring_backward(plan, ring, groups, -1, shape.has_forward());
  return plan;
}

Plan make_pass_kv_ring_classes_plan(std::string schedule, const AttentionShape& shape, int ranks,
                                    ChunkOwnership ownership, int classes, int first_rank) {
  Plan plan = make_chunked_plan(std::move(schedule), shape, ranks, ownership);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  relabel_ranks_from(plan, first_rank);
  const std::vector<RingMember> ring = ring_members(plan, objs, shape.has_backward());
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
