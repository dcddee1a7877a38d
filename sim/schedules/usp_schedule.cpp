#include "sim/schedules/usp_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/pairwise_exchange.hpp"
#include "sim/schedules/ring_passes.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

// Object ids indexed by chunk id p*u + h; the backward ones are -1 without a
// backward pass.
struct HeadObjects {
  std::vector<int> q, kv, o, lse, d_o, dq, dkv;
};

struct Grid {
  int u = 1;    // ranks per Ulysses group = head groups
  int r = 1;    // ring groups
  int rep = 1;  // ranks holding a copy of each KV head (u / kv_heads when u > kv_heads)
  int chunk(int p, int h) const { return p * u + h; }
  int head_rank(int p, int h) const { return (p / u) * u + h; }  // who computes chunk (p, h)
};

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

Plan make_grid_plan(std::string name, const AttentionShape& shape, int ranks, const Grid& grid) {
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

HeadObjects add_head_objects(Plan& plan, const Grid& grid) {
  HeadObjects objs;
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

int at(const std::vector<int>& v, int i) { return v.empty() ? -1 : v[static_cast<std::size_t>(i)]; }

// The ring of head group h across the r Ulysses groups. Under a window or documents each key
// goes only to the ring members whose queries read it (route_keys_by_readers: both directions
// where that needs fewer steps).
std::vector<RingMember> head_ring(const Plan& plan, const Grid& grid, const HeadObjects& objs,
                                  int h) {
  std::vector<RingMember> ring;
  for (int g = 0; g < grid.r; ++g) {
    RingMember member;
    member.rank = g * grid.u + h;
    for (int m = 0; m < grid.u; ++m) {
      const int i = grid.chunk(g * grid.u + m, h);
      member.queries.push_back(
          {i, at(objs.q, i), at(objs.o, i), at(objs.lse, i), at(objs.d_o, i), at(objs.dq, i)});
      member.keys.push_back({i, at(objs.kv, i), at(objs.dkv, i)});
    }
    ring.push_back(std::move(member));
  }
  const AttentionMaskKind mask = plan.shape.mask.kind;
  if (mask == AttentionMaskKind::sliding_window || mask == AttentionMaskKind::documents) {
    route_keys_by_readers(plan, ring);
  }
  return ring;
}

// An all-to-all inside each Ulysses group, programs of ranks 0..emit_ranks-1 only (of its first
// members where emit_ranks cuts a group: Ulysses' offset quotient); objects(from, to) lists what
// rank `from` sends to rank `to` of its group.
void group_all_to_all(Plan& plan, CommGroups& groups, const Grid& grid, int emit_ranks,
                      const std::function<std::vector<int>(int, int)>& objects) {
  for (int g = 0; g * grid.u < emit_ranks; ++g) {
    std::vector<int> members;
    for (int h = 0; h < grid.u; ++h) members.push_back(g * grid.u + h);
    add_pairwise_exchange(
        plan, groups, members,
        [&](int from, int to) { return objects(g * grid.u + from, g * grid.u + to); },
        std::min(grid.u, emit_ranks - g * grid.u));
  }
}

// Frees, on every rank x < emit_ranks, the objects of the other ranks p of its group that
// `pick(p, h_x)` names (received inputs, or outputs already sent to p).
void free_foreign(Plan& plan, const Grid& grid, int emit_ranks,
                  const std::function<std::vector<int>(int)>& pick) {
  ProgramBuilder build(plan);
  for (int x = 0; x < emit_ranks; ++x) {
    const int g = x / grid.u;
    for (int m = 0; m < grid.u; ++m) {
      const int p = g * grid.u + m;
      if (p == x) continue;
      for (int obj : pick(grid.chunk(p, x % grid.u))) build.free(x, obj);
    }
  }
}

// On every owner p < emit_ranks, sums the replicas' dKV[p, h] into dKV[p, h - h % rep] (one
// merge op).
void sum_replicated_dkv(Plan& plan, const Grid& grid, int emit_ranks, const HeadObjects& objs) {
  if (grid.rep == 1) return;
  ProgramBuilder build(plan);
  for (int p = 0; p < emit_ranks; ++p) {
    std::vector<int> targets, partials;
    for (int h = 0; h < grid.u; h += grid.rep) {
      targets.push_back(at(objs.dkv, grid.chunk(p, h)));
      for (int c = 1; c < grid.rep; ++c) partials.push_back(at(objs.dkv, grid.chunk(p, h + c)));
    }
    build.merge(p, partials, targets);
    for (int obj : partials) build.free(p, obj);
  }
}

// The programs of ranks 0..emit_ranks-1 (all: the full plan; fewer: a quotient plan's, peers
// still the full plan's ranks). USP cuts whole Ulysses groups (emit_ranks a multiple of u);
// Ulysses (one group, r = 1) cuts its one group, each head ring being one rank.
Plan build_grid(std::string name, const AttentionShape& shape, int ranks, int u, int emit_ranks) {
  check_divisible(shape, ranks, u, name);
  const Grid grid{u, ranks / u, replication(shape, u)};
  if (emit_ranks < 0) emit_ranks = ranks;
  const int emit_groups = (emit_ranks + u - 1) / u;
  const bool whole = emit_groups == grid.r;
  // The head rings with a program to emit: all u, or (Ulysses) those of ranks 0..emit_ranks-1.
  const int rings = grid.r == 1 ? std::min(u, emit_ranks) : u;
  Plan plan = make_grid_plan(std::move(name), shape, ranks, grid);
  const HeadObjects objs = add_head_objects(plan, grid);
  const bool fwd = shape.has_forward();
  const bool bwd = shape.has_backward();
  CommGroups groups(ranks);
  // Chunk of rank p for the head group of rank y.
  auto chunk_for = [&](int p, int y) { return grid.chunk(p, y % u); };
  if (fwd) {
    group_all_to_all(plan, groups, grid, emit_ranks, [&](int from, int to) {
      const int i = chunk_for(from, to);
      return std::vector<int>{at(objs.q, i), at(objs.kv, i)};
    });
    for (int h = 0; h < rings; ++h) {
      if (whole || grid.r == 1) {
        add_ring_forward(plan, head_ring(plan, grid, objs, h), groups);
      } else {
        add_ring_forward_classes(plan, head_ring(plan, grid, objs, h), emit_groups, groups);
      }
    }
    group_all_to_all(plan, groups, grid, emit_ranks, [&](int from, int to) {
      return std::vector<int>{at(objs.o, chunk_for(to, from))};
    });
    if (!bwd) {
      free_foreign(plan, grid, emit_ranks, [&](int i) {
        return std::vector<int>{at(objs.o, i), at(objs.q, i), at(objs.kv, i)};
      });
    }
  }
  if (bwd) {
    group_all_to_all(plan, groups, grid, emit_ranks, [&](int from, int to) {
      return std::vector<int>{at(objs.d_o, chunk_for(from, to))};
    });
    for (int h = 0; h < rings; ++h) {
      add_ring_backward(plan, head_ring(plan, grid, objs, h), groups,
                        grid.r == 1 ? -1 : emit_groups);
    }
    group_all_to_all(plan, groups, grid, emit_ranks, [&](int from, int to) {
      const int i = chunk_for(to, from);
      return std::vector<int>{at(objs.dq, i), at(objs.dkv, i)};
    });
    free_foreign(plan, grid, emit_ranks, [&](int i) {
      return std::vector<int>{at(objs.dq, i), at(objs.dkv, i), at(objs.d_o, i),
                              at(objs.q, i),  at(objs.kv, i),  at(objs.o, i)};
    });
    sum_replicated_dkv(plan, grid, emit_ranks, objs);
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
  Plan plan = build_grid("usp", shape, ranks, u, classes);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_ulysses_plan(const AttentionShape& shape, int ranks) {
  return build_grid("ulysses", shape, ranks, ranks, -1);
}

}  // namespace tilesim
