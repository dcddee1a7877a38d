#include "sim/schedules/zigzag_schedule.hpp"

#include <algorithm>

#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "sim/schedules/ring_schedule.hpp"

namespace tilesim {
namespace {

// 2P one-block chunks, block i owned by rank i < P ? i : 2P-1-i; no programs yet.
Plan make_block_chunk_plan(const AttentionShape& shape, int ranks) {
  Plan plan = make_chunked_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
  plan.chunks.clear();
  const int blocks = 2 * ranks;
  for (int b = 0; b < blocks; ++b) {
    Chunk chunk;
    chunk.owner = b < ranks ? b : blocks - 1 - b;
    chunk.tokens = shape.seq_len / blocks;
    chunk.blocks = {b};
    plan.chunks.push_back(std::move(chunk));
  }
  return plan;
}

// Each block travels one way, as far as its farthest reader on that side: with F (G) the
// largest offset of a rank with work on it counted towards r+1 (r-1) from its owner, it goes
// forward F hops if F < G, else back G hops; ties send low blocks forward and high blocks back
// (the way their readers lie under a window). Member r: queries {r, 2P-1-r}.
std::vector<RingMember> two_direction_ring(const Plan& plan, int ranks,
                                           const AttentionObjects* objs, bool bwd) {
  const auto query = [&](int c) {
    if (objs == nullptr) return RingQuery{c};
    const auto i = static_cast<std::size_t>(c);
    return RingQuery{
        c, objs->q[i], objs->o[i], objs->lse[i], bwd ? objs->d_o[i] : -1, bwd ? objs->dq[i] : -1};
  };
  const auto reads = [&](int rank, int block) {
    return plan.unmasked_pairs(rank, block) > 0 ||
           plan.unmasked_pairs(2 * ranks - 1 - rank, block) > 0;
  };
  std::vector<RingMember> ring(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    RingMember& m = ring[static_cast<std::size_t>(r)];
    m.rank = r;
    m.queries = {query(r), query(2 * ranks - 1 - r)};
    for (int block : {r, 2 * ranks - 1 - r}) {
      int forward = 0, back = 0;
      for (int d = 1; d < ranks; ++d) {
        if (reads((r + d) % ranks, block)) forward = d;
        if (reads((r - d + ranks) % ranks, block)) back = d;
      }
      RingKey key{block};
      if (objs != nullptr) {
        const auto i = static_cast<std::size_t>(block);
        key.kv = objs->kv[i];
        key.dkv = bwd ? objs->dkv[i] : -1;
      }
      const bool low = block < ranks;
      const bool goes_forward = forward < back || (forward == back && low);
      key.hops = goes_forward ? forward : back;
      (goes_forward ? m.keys : m.back_keys).push_back(key);
    }
  }
  return ring;
}

int one_way_steps(const AttentionShape& shape, int ranks) {
  const Plan plan = make_chunked_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
  std::vector<RingMember> ring;
  for (int r = 0; r < ranks; ++r) ring.push_back(RingMember{r, {RingQuery{r}}, {RingKey{r}}});
  return ring_steps(plan, ring);
}

}  // namespace

Plan make_zigzag_plan(const AttentionShape& shape, int ranks) {
  const bool windowed = shape.mask.kind == AttentionMaskKind::sliding_window ||
                        shape.mask.kind == AttentionMaskKind::documents;
  if (!windowed || ranks < 2) {
    return make_pass_kv_ring_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
  }
  Plan plan = make_block_chunk_plan(shape, ranks);
  const std::vector<RingMember> ids = two_direction_ring(plan, ranks, nullptr, false);
  const int two_way = std::max(ring_steps(plan, ids), ring_back_steps(plan, ids));
  if (two_way >= one_way_steps(shape, ranks)) {
    return make_pass_kv_ring_plan("zigzag", shape, ranks, ChunkOwnership::zigzag);
  }
  plan.tile_a = 1;
  plan.tile_b = ranks;
  const AttentionObjects objs = add_attention_objects(plan);
  const bool bwd = shape.has_backward();
  const std::vector<RingMember> ring = two_direction_ring(plan, ranks, &objs, bwd);
  CommGroups groups(ranks);
  if (shape.has_forward()) add_ring_forward(plan, ring, groups);
  if (bwd) add_ring_backward(plan, ring, groups, -1, shape.has_forward());
  return plan;
}

}  // namespace tilesim
