#include "sim/schedules/usp_grid.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "sim/plan/program_builder.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/pairwise_exchange.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

void check_divisible(const AttentionShape& shape, int ranks, int u, const std::string& name) {
  if (u < 1 || ranks % u != 0) {
    throw ScheduleError(
        "schedule.ulysses",
        fmt::format("{}: Ulysses degree {} does not divide {} GPUs", name, u, ranks));
  }
  if (shape.heads % u != 0) {
    throw ScheduleError("attention.heads",
                        fmt::format("{}: heads {} are not divisible by the Ulysses degree {} (the "
                                    "all-to-all gives each rank heads/{} heads)",
                                    name, shape.heads, u, u));
  }
  if (shape.kv_heads % u != 0 && u % shape.kv_heads != 0) {
    throw ScheduleError(
        "attention.kv_heads",
        fmt::format("{}: kv_heads {} and the Ulysses degree {} do not divide one another: each "
                    "rank's heads/{} query heads must read whole KV heads, which needs kv_heads "
                    "divisible by {} or, replicating KV heads, {} divisible by kv_heads",
                    name, shape.kv_heads, u, u, u, u));
  }
}

// KV replication (usp_schedule.hpp): with u > kv_heads every KV head goes to u / kv_heads
// ranks of the Ulysses group.
int replication(const AttentionShape& shape, int u) {
  return u > shape.kv_heads ? u / shape.kv_heads : 1;
}

Plan make_grid_plan(std::string name, const AttentionShape& shape, int ranks, const UspGrid& grid) {
  const bool zigzag = shape.causal && grid.r > 1;
  const int blocks = zigzag ? 2 * ranks : ranks;
  if (shape.seq_len % blocks != 0) {
    throw ScheduleError("attention.seq_len",
                        fmt::format("seq_len {} is not divisible into {} blocks for {} GPUs",
                                    shape.seq_len, blocks, ranks));
  }
  Plan plan;
  plan.schedule = std::move(name);
  plan.ranks = ranks;
  plan.shape = shape;
  plan.head_groups = grid.u;
  plan.tile_a = 1;
  plan.tile_b = grid.r;
  plan.layout.kind = LayoutKind::contiguous;
  plan.layout.seq_len = shape.seq_len;
  plan.layout.blocks = blocks;
  plan.programs.resize(static_cast<std::size_t>(ranks));
  for (int p = 0; p < ranks; ++p) {
    for (int h = 0; h < grid.u; ++h) {
      Chunk chunk;
      chunk.blocks = zigzag ? std::vector<int>{p, 2 * ranks - 1 - p} : std::vector<int>{p};
      chunk.owner = p;
      chunk.tokens = shape.seq_len / ranks;
      chunk.head_group = h;
      plan.chunks.push_back(std::move(chunk));
    }
  }
  return plan;
}

UspHeadObjects add_head_objects(Plan& plan, const UspGrid& grid) {
  UspHeadObjects objs;
  const AttentionShape& s = plan.shape;
  const bool fwd = s.has_forward();
  const bool bwd = s.has_backward();
  const double u = grid.u;
  // The KV side of a chunk holds min(u, kv_heads) parts of the KV heads: 1/u of them, or one
  // whole KV head when replicated.
  const double kv_parts = static_cast<double>(grid.u / grid.rep);
  for (int p = 0; p < plan.ranks; ++p) {
    for (int h = 0; h < grid.u; ++h) {
      const int i = grid.chunk(p, h);
      const int x = grid.head_rank(p, h);
      const std::int64_t c = plan.chunks[static_cast<std::size_t>(i)].tokens;
      const int in_home = fwd ? p : x;  // backward-only: saved state in head layout
      auto name = [&](const char* t) { return fmt::format("{}[{}.h{}]", t, p, h); };
      objs.q.push_back(
          plan.add_object({Tensor::q, i, in_home, s.q_bytes(c) / u, true, false, name("Q")}));
      objs.kv.push_back(plan.add_object(
          {Tensor::kv, i, in_home, s.kv_bytes(c) / kv_parts, true, false, name("KV")}));
      // O and dQ travel only finished (the all-to-all back): output dtype. dKV
      // also travels the ring unfinished when r > 1: then the partial dtype.
      objs.o.push_back(plan.add_object(
          {Tensor::o, i, fwd ? p : x, s.o_output_bytes(c) / u, !fwd, fwd, name("O")}));
      objs.lse.push_back(
          plan.add_object({Tensor::lse, i, x, s.lse_bytes(c) / u, !fwd, fwd, name("LSE")}));
      if (!bwd) continue;
      objs.d_o.push_back(
          plan.add_object({Tensor::d_o, i, p, s.d_o_bytes(c) / u, true, false, name("dO")}));
      objs.dq.push_back(
          plan.add_object({Tensor::dq, i, p, s.dq_output_bytes(c) / u, false, true, name("dQ")}));
      const double dkv_bytes = grid.r > 1 ? s.dkv_accumulator_bytes(c) : s.dkv_output_bytes(c);
      // Of the rep copies of a KV head's gradient, the first is the output; the others are
      // summed into it at the owner.
      const bool dkv_output = h % grid.rep == 0;
      objs.dkv.push_back(plan.add_object(
          {Tensor::dkv, i, p, dkv_bytes / kv_parts, false, dkv_output, name("dKV")}));
    }
  }
  return objs;
}

}  // namespace

int usp_object(const std::vector<int>& v, int i) {
  return v.empty() ? -1 : v[static_cast<std::size_t>(i)];
}

UspGrid usp_grid(const AttentionShape& shape, int ranks, int u, const std::string& name) {
  check_divisible(shape, ranks, u, name);
  return UspGrid{u, ranks / u, replication(shape, u)};
}

Plan make_usp_grid_plan(std::string name, const AttentionShape& shape, int ranks,
                        const UspGrid& grid, UspHeadObjects& objs, int first_rank) {
  Plan plan = make_grid_plan(std::move(name), shape, ranks, grid);
  rotate_chunk_contents(plan, first_rank * grid.u);
  objs = add_head_objects(plan, grid);
  return plan;
}

std::vector<RingMember> usp_head_ring(const Plan& plan, const UspGrid& grid,
                                      const UspHeadObjects& objs, int h) {
  std::vector<RingMember> ring;
  for (int g = 0; g < grid.r; ++g) {
    RingMember member;
    member.rank = g * grid.u + h;
    for (int m = 0; m < grid.u; ++m) {
      const int i = grid.chunk(g * grid.u + m, h);
      member.queries.push_back({i, usp_object(objs.q, i), usp_object(objs.o, i),
                                usp_object(objs.lse, i), usp_object(objs.d_o, i),
                                usp_object(objs.dq, i)});
      member.keys.push_back({i, usp_object(objs.kv, i), usp_object(objs.dkv, i)});
    }
    ring.push_back(std::move(member));
  }
  const AttentionMaskKind mask = plan.shape.mask.kind;
  if (mask == AttentionMaskKind::sliding_window || mask == AttentionMaskKind::documents) {
    route_keys_by_readers(plan, ring);
  }
  return ring;
}

void usp_exchange_member(Plan& plan, CommGroups& groups, const UspGrid& grid, int x,
                         const UspExchangeObjects& objects, std::span<const int> recv_after) {
  const int g = x / grid.u;
  std::vector<int> members;
  for (int h = 0; h < grid.u; ++h) members.push_back(g * grid.u + h);
  add_pairwise_exchange_member(
      plan, groups, members, x % grid.u,
      [&](int from, int to) { return objects(g * grid.u + from, g * grid.u + to); }, recv_after);
}

void usp_free_foreign(Plan& plan, const UspGrid& grid, int x,
                      const std::function<std::vector<int>(int)>& pick) {
  ProgramBuilder build(plan);
  const int g = x / grid.u;
  for (int m = 0; m < grid.u; ++m) {
    const int p = g * grid.u + m;
    if (p == x) continue;
    for (int obj : pick(grid.chunk(p, x % grid.u))) build.free(x, obj);
  }
}

void usp_forward_prologue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                          const UspHeadObjects& objs, int x) {
  usp_exchange_member(plan, groups, grid, x, [&](int from, int to) {
    const int i = grid.chunk(from, to % grid.u);
    return std::vector<int>{usp_object(objs.q, i), usp_object(objs.kv, i)};
  });
}

UspRingSteps usp_ring_steps(const Plan& plan, const std::vector<RingMember>& ring) {
  return {ring_steps(plan, ring), ring_back_steps(plan, ring)};
}

std::unique_ptr<RingMemberForward> usp_ring_member(Plan& plan, FusingScratch& scratch,
                                                   const std::vector<RingMember>& ring,
                                                   UspRingSteps steps, const UspGrid& grid, int x,
                                                   int ring_groups, CommGroups& groups) {
  const int g = x / grid.u;
  const auto rank_of = [&](int member) { return ring[static_cast<std::size_t>(member)].rank; };
  return std::make_unique<RingMemberForward>(plan, scratch, ring, g, rank_of((g + 1) % ring_groups),
                                             rank_of((g - 1 + ring_groups) % ring_groups),
                                             steps.forward, steps.back, groups);
}

namespace {

// The frees, on rank x, of the KV slices it received for its own bundle.
void free_own_bundle_kv(Plan& plan, const UspGrid& grid, const UspHeadObjects& objs, int x) {
  usp_free_foreign(plan, grid, x, [&](int i) { return std::vector<int>{usp_object(objs.kv, i)}; });
}

}  // namespace

void usp_free_own_bundle(Plan& plan, const UspGrid& grid, const UspHeadObjects& objs, int x) {
  if (!plan.shape.has_backward()) free_own_bundle_kv(plan, grid, objs, x);
}

void usp_forward_epilogue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                          const UspHeadObjects& objs, int x) {
  const int ring_end[] = {static_cast<int>(plan.programs[static_cast<std::size_t>(x)].size()) - 1};
  usp_exchange_member(
      plan, groups, grid, x,
      [&](int from, int to) {
        return std::vector<int>{usp_object(objs.o, grid.chunk(to, from % grid.u))};
      },
      ring_end);
  if (plan.shape.has_backward()) return;
  usp_free_foreign(plan, grid, x, [&](int i) {
    return std::vector<int>{usp_object(objs.o, i), usp_object(objs.q, i)};
  });
}

void usp_forward_rank(Plan& plan, CommGroups& groups, FusingScratch& scratch,
                      const std::vector<RingMember>& ring, UspRingSteps steps, const UspGrid& grid,
                      const UspHeadObjects& objs, int x, int ring_groups) {
  usp_forward_prologue(plan, groups, grid, objs, x);
  const auto member = usp_ring_member(plan, scratch, ring, steps, grid, x, ring_groups, groups);
  member->emit_step();
  usp_free_own_bundle(plan, grid, objs, x);
  while (!member->done()) member->emit_step();
  usp_forward_epilogue(plan, groups, grid, objs, x);
}

void usp_backward_prologue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                           const UspHeadObjects& objs, int x) {
  usp_exchange_member(plan, groups, grid, x, [&](int from, int to) {
    return std::vector<int>{usp_object(objs.d_o, grid.chunk(from, to % grid.u))};
  });
}

std::unique_ptr<RingMemberBackward> usp_backward_member(Plan& plan, FusingScratch& scratch,
                                                        const std::vector<RingMember>& ring,
                                                        UspRingSteps steps, const UspGrid& grid,
                                                        int x, CommGroups& groups) {
  return std::make_unique<RingMemberBackward>(plan, scratch, ring, x / grid.u, steps.forward,
                                              steps.back, groups);
}

void usp_backward_step(Plan& plan, RingMemberBackward& member, const UspGrid& grid,
                       const UspHeadObjects& objs, int x) {
  const bool first = !member.started();
  member.emit_step();
  if (first) free_own_bundle_kv(plan, grid, objs, x);
  if (member.done()) {
    usp_free_foreign(plan, grid, x, [&](int i) {
      return std::vector<int>{usp_object(objs.d_o, i), usp_object(objs.q, i),
                              usp_object(objs.o, i)};
    });
  }
}

void usp_backward_epilogue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                           const UspHeadObjects& objs, int x) {
  usp_exchange_member(plan, groups, grid, x, [&](int from, int to) {
    const int i = grid.chunk(to, from % grid.u);
    return std::vector<int>{usp_object(objs.dq, i), usp_object(objs.dkv, i)};
  });
  usp_free_foreign(plan, grid, x, [&](int i) {
    return std::vector<int>{usp_object(objs.dq, i), usp_object(objs.dkv, i)};
  });
  if (grid.rep == 1) return;
  // The replicas' dKV[x, h] summed into dKV[x, h - h % rep].
  std::vector<int> targets, partials;
  for (int h = 0; h < grid.u; h += grid.rep) {
    targets.push_back(usp_object(objs.dkv, grid.chunk(x, h)));
    for (int c = 1; c < grid.rep; ++c)
      partials.push_back(usp_object(objs.dkv, grid.chunk(x, h + c)));
  }
  ProgramBuilder build(plan);
  build.merge(x, partials, targets);
  for (int obj : partials) build.free(x, obj);
}

void usp_backward_rank(Plan& plan, CommGroups& groups, FusingScratch& scratch,
                       const std::vector<RingMember>& ring, UspRingSteps steps, const UspGrid& grid,
                       const UspHeadObjects& objs, int x) {
  usp_backward_prologue(plan, groups, grid, objs, x);
  const auto member = usp_backward_member(plan, scratch, ring, steps, grid, x, groups);
  while (!member->done()) usp_backward_step(plan, *member, grid, objs, x);
  usp_backward_epilogue(plan, groups, grid, objs, x);
}

}  // namespace tilesim
