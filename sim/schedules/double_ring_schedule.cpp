#include "sim/schedules/double_ring_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

namespace {

struct RingSeat {
  int k, n;     // inner ring size, nodes
  int node, i;  // this rank is member i of node `node`
  int inner_next, inner_prev, outer_next, outer_prev;
  RingSeat(int rank, int inner, int nodes)
      : k(inner), n(nodes), node(rank / inner), i(rank % inner) {
    inner_next = node * k + (i + 1) % k;
    inner_prev = node * k + (i - 1 + k) % k;
    outer_next = ((node + 1) % n) * k + i;
    outer_prev = ((node - 1 + n) % n) * k + i;
  }
  int rank() const { return node * k + i; }
  // Node whose KV circulates here in outer step o, and the chunk computed in
  // its inner step t.
  int kv_node(int o) const { return (node - o + n) % n; }
  int chunk(int m, int t) const { return m * k + ((i - t) % k + k) % k; }
};

// How far each chunk's KV travels (double_ring_schedule.hpp, "Masks"): chunk x = M*k + j
// goes `spine` outer hops, (M, j) -> (M+1, j) -> ... (a relay through nodes between), and at
// node M+o from (M+o, j) `branch` inner hops (M+o, j+1), ...: each as far as its farthest
// reader. Full and causal masks: every chunk goes all the way (n-1 and k-1).
struct KvReach {
  int k = 1, n = 1;
  std::vector<int> spine;        // by chunk
  std::vector<int> branch;       // chunk * n + o
  std::vector<int> inner_steps;  // by outer step: 1 + the largest branch there
  int outer_steps = 1;           // 1 + the largest spine
  int branch_of(int chunk, int o) const { return branch[static_cast<std::size_t>(chunk * n + o)]; }
  // Whether the rank at inner offset t from the spine of node M+o holds chunk x there.
  bool holds(int chunk, int o, int t) const {
    return spine[static_cast<std::size_t>(chunk)] >= o && branch_of(chunk, o) >= t;
  }
};

bool mask_may_empty_pairs(const AttentionShape& shape) {
  return shape.mask.may_leave_pairs_empty();
}

KvReach kv_reach(const Plan& plan, int inner) {
  KvReach r;
  r.k = inner;
  r.n = plan.ranks / inner;
  const int ranks = plan.ranks;
  const bool cut = mask_may_empty_pairs(plan.shape);
  r.spine.assign(static_cast<std::size_t>(ranks), cut ? 0 : r.n - 1);
  r.branch.assign(static_cast<std::size_t>(ranks * r.n), cut ? 0 : r.k - 1);
  for (int x = 0; cut && x < ranks; ++x) {
    const int m = x / r.k, j = x % r.k;
    for (int o = 0; o < r.n; ++o) {
      const int node = (m + o) % r.n;
      for (int t = 0; t < r.k; ++t) {
        if (plan.unmasked_pairs(node * r.k + (j + t) % r.k, x) <= 0) continue;
        r.spine[static_cast<std::size_t>(x)] = o;
        r.branch[static_cast<std::size_t>(x * r.n + o)] = t;
      }
    }
  }
  r.inner_steps.assign(static_cast<std::size_t>(r.n), 1);
  for (int x = 0; x < ranks; ++x) {
    const int spine = r.spine[static_cast<std::size_t>(x)];
    r.outer_steps = std::max(r.outer_steps, spine + 1);
    for (int o = 0; o <= spine; ++o) {
      int& steps = r.inner_steps[static_cast<std::size_t>(o)];
      steps = std::max(steps, r.branch_of(x, o) + 1);
    }
  }
  return r;
}

// The KV circulation of one pass (double_ring_schedule.hpp); `step(o, t, cur, held)` emits the
// compute (and what follows it) of inner step t of outer step o; `held` says whether the mask
// brought chunk `cur` here at all.
template <typename Step>
void circulate_kv(ProgramBuilder& build, CommGroups& groups, const AttentionObjects& objs,
                  const RingSeat& seat, const KvReach& reach, Step step) {
  auto kv = [&](int chunk) { return objs.kv[static_cast<std::size_t>(chunk)]; };
  const int p = seat.rank();
  std::vector<int> last_free;
  for (int o = 0; o < reach.outer_steps; ++o) {
    const int m = seat.kv_node(o);
    const int steps = reach.inner_steps[static_cast<std::size_t>(o)];
    for (int t = 0; t < steps; ++t) {
      const int cur = seat.chunk(m, t);
      const bool held = reach.holds(cur, o, t);
      const bool inner_step = t + 1 < steps;
      const bool outer_step = t == 0 && o + 1 < reach.outer_steps;
      if (inner_step || outer_step) {
        const int g = groups.take(p);
        if (inner_step) {
          const int next = seat.chunk(m, t + 1);
          if (held && reach.holds(cur, o, t + 1)) build.send(p, kv(cur), seat.inner_next, g);
          if (reach.holds(next, o, t + 1)) {
            build.recv(p, kv(next), seat.inner_prev, g, last_free);
          }
        }
        if (outer_step) {
          const int slot = seat.chunk((m - 1 + seat.n) % seat.n, 0);
          if (held && reach.holds(cur, o + 1, 0)) build.send(p, kv(cur), seat.outer_next, g);
          if (reach.holds(slot, o + 1, 0)) build.recv(p, kv(slot), seat.outer_prev, g);
        }
      }
      step(o, t, cur, held);
      if (held && cur != p) last_free = {build.free(p, kv(cur))};
    }
  }
}

void check_inner(int ranks, int inner) {
  if (inner < 1 || ranks % inner != 0) {
    throw ScheduleError(
        "schedule.inner",
        fmt::format("inner ring of {} ranks does not divide {} GPUs", inner, ranks));
  }
}

// Zigzag ownership balances a causal mask; under a window or documents contiguous chunks
// let the KV stop after its farthest reader (a zigzag chunk is read on both sides).
Plan double_ring_layout(const AttentionShape& shape, int ranks) {
  const bool zigzag = shape.causal && !mask_may_empty_pairs(shape);
  Plan plan = make_chunked_plan("double_ring", shape, ranks,
                                zigzag ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  return plan;
}

// The forward programs of ranks 0..emit_ranks-1 (peers are the full plan's ranks).
void add_double_ring_forward(Plan& plan, ProgramBuilder& build, CommGroups& groups,
                             const AttentionObjects& objs, const KvReach& reach, int emit_ranks) {
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const int inner = reach.k, nodes = reach.n;
  for (int p = 0; p < emit_ranks; ++p) {
    const RingSeat seat(p, inner, nodes);
    circulate_kv(build, groups, objs, seat, reach, [&](int, int, int cur, bool held) {
      if (!held || plan.unmasked_pairs(p, cur) <= 0) return;
      const int reads[] = {at(objs.q, p), at(objs.kv, cur)};
      const int writes[] = {at(objs.o, p), at(objs.lse, p)};
      build.compute(p, p, cur, Pass::fwd, reads, writes);
    });
  }
}

// The backward programs of ranks 0..emit_ranks-1 (peers are the full plan's ranks).
void add_double_ring_backward(Plan& plan, ProgramBuilder& build, CommGroups& groups,
                              const AttentionObjects& objs, const KvReach& reach, int emit_ranks) {
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const int inner = reach.k, nodes = reach.n;
  for (int p = 0; p < emit_ranks; ++p) {
    const RingSeat seat(p, inner, nodes);
    std::vector<int> last_dkv_free;
    // dKV[cur] follows KV[cur]: after the compute of inner step t it goes to the inner
    // successor (k hops per outer step bring the slot's dKV back to this rank), and after the
    // last inner step to the outer successor, the node that computes that slot next (n hops:
    // the last one reaches home). Under a mask a branch's dKV goes straight back to the spine
    // after its last hop, and the spine's straight home after its last node.
    circulate_kv(build, groups, objs, seat, reach, [&](int o, int t, int cur, bool held) {
      if (held && plan.unmasked_pairs(p, cur) > 0) {
        const int reads[] = {at(objs.q, p), at(objs.kv, cur), at(objs.d_o, p), at(objs.o, p),
                             at(objs.lse, p)};
        const int writes[] = {at(objs.dq, p), at(objs.dkv, cur)};
        build.compute(p, p, cur, Pass::bwd, reads, writes);
      }
      const int m = seat.kv_node(o);
      const int slot = seat.chunk(m, 0);
      const int steps = reach.inner_steps[static_cast<std::size_t>(o)];
      if (seat.k > 1) {
        const int g = groups.take(p);
        bool sent = false;
        if (held && t < reach.branch_of(cur, o)) {
          build.send(p, at(objs.dkv, cur), seat.inner_next, g);
          sent = true;
        } else if (held && t > 0 && t == reach.branch_of(cur, o)) {
          build.send(p, at(objs.dkv, cur), seat.node * seat.k + (seat.i - t + seat.k) % seat.k, g);
          sent = true;
        }
        const int next = seat.chunk(m, t + 1);
        if (t + 1 < seat.k && reach.holds(next, o, t + 1)) {
          build.recv(p, at(objs.dkv, next), seat.inner_prev, g, last_dkv_free);
        }
        if (t > 0 && reach.holds(slot, o, 0) && reach.branch_of(slot, o) == t) {
          build.recv(p, at(objs.dkv, slot), seat.node * seat.k + (seat.i + t) % seat.k, g,
                     last_dkv_free);
        }
        if (sent) last_dkv_free = {build.free(p, at(objs.dkv, cur))};
      }
      if (t + 1 == steps && reach.outer_steps > 1) {
        const int spine = reach.spine[static_cast<std::size_t>(slot)];
        const int next_slot = seat.chunk((m - 1 + seat.n) % seat.n, 0);
        const int g = groups.take(p);
        bool sent = false;
        if (spine > o) {
          build.send(p, at(objs.dkv, slot), seat.outer_next, g);
          sent = true;
        } else if (spine == o && o > 0) {
          build.send(p, at(objs.dkv, slot), m * seat.k + seat.i, g);
          sent = true;
        }
        if (o + 1 < reach.outer_steps && reach.holds(next_slot, o + 1, 0)) {
          build.recv(p, at(objs.dkv, next_slot), seat.outer_prev, g, last_dkv_free);
        }
        if (o > 0 && reach.spine[static_cast<std::size_t>(p)] == o) {
          build.recv(p, at(objs.dkv, p), ((seat.node + o) % seat.n) * seat.k + seat.i, g,
                     last_dkv_free);
        }
        if (sent) last_dkv_free = {build.free(p, at(objs.dkv, slot))};
      }
    });
  }
}

}  // namespace

Plan make_double_ring_classes_plan(const AttentionShape& shape, int ranks, int inner, int classes) {
  check_inner(ranks, inner);
  if (classes < 1 || ranks % classes != 0 || classes % inner != 0) {
    throw std::invalid_argument(fmt::format(
        "a double-ring quotient plan takes classes a multiple of inner = {} dividing {}", inner,
        ranks));
  }
  Plan plan = double_ring_layout(shape, ranks);
  const AttentionObjects objs = add_attention_objects(plan);
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  // One chunk-pair scan for both passes: the backward's dKV follows the forward's KV.
  const KvReach reach = kv_reach(plan, inner);
  if (shape.has_forward()) add_double_ring_forward(plan, build, groups, objs, reach, classes);
  if (shape.has_backward()) add_double_ring_backward(plan, build, groups, objs, reach, classes);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner) {
  check_inner(ranks, inner);
  Plan plan = double_ring_layout(shape, ranks);
  const AttentionObjects objs = add_attention_objects(plan);
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  const KvReach reach = kv_reach(plan, inner);
  if (shape.has_forward()) add_double_ring_forward(plan, build, groups, objs, reach, ranks);
  if (shape.has_backward()) add_double_ring_backward(plan, build, groups, objs, reach, ranks);
  return plan;
}

}  // namespace tilesim
