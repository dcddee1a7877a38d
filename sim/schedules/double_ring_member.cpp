#include "sim/schedules/double_ring_member.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

int object_at(const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; }

}  // namespace

KvReach kv_reach(const Plan& plan, int inner) {
  KvReach r;
  r.k = inner;
  r.n = plan.ranks / inner;
  const int ranks = plan.ranks;
  r.whole = !plan.shape.mask.may_leave_pairs_empty();
  r.inner_steps.assign(static_cast<std::size_t>(r.n), r.whole ? r.k : 1);
  r.outer_steps = r.whole ? r.n : 1;
  if (r.whole) return r;
  r.spine.assign(static_cast<std::size_t>(ranks), 0);
  r.branch.assign(static_cast<std::size_t>(ranks * r.n), 0);
  for (int x = 0; x < ranks; ++x) {
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

// Zigzag ownership balances a causal mask; under a window or documents contiguous chunks
// let the KV stop after its farthest reader (a zigzag chunk is read on both sides).
Plan double_ring_layout(const AttentionShape& shape, int ranks) {
  const bool zigzag = shape.causal && !shape.mask.may_leave_pairs_empty();
  Plan plan = make_chunked_plan("double_ring", shape, ranks,
                                zigzag ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  return plan;
}

void check_double_ring_inner(int ranks, int inner) {
  if (inner < 1 || ranks % inner != 0) {
    throw ScheduleError(
        "schedule.inner",
        fmt::format("inner ring of {} ranks does not divide {} GPUs", inner, ranks));
  }
}

RingSeat::RingSeat(int rank, int inner, int nodes)
    : k(inner), n(nodes), node(rank / inner), i(rank % inner) {
  inner_next = node * k + (i + 1) % k;
  inner_prev = node * k + (i - 1 + k) % k;
  outer_next = ((node + 1) % n) * k + i;
  outer_prev = ((node - 1 + n) % n) * k + i;
}

DoubleRingMember::DoubleRingMember(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
                                   const KvReach& reach, int rank)
    : plan_(&plan),
      build_(plan),
      groups_(&groups),
      objs_(&objs),
      reach_(&reach),
      seat_(rank, reach.k, reach.n),
      phase_(plan.shape.has_forward()    ? Phase::forward
             : plan.shape.has_backward() ? Phase::backward
                                         : Phase::done) {}

// One step of the KV circulation (double_ring_schedule.hpp), then the pass's call and what
// follows it; `held` says whether the mask brought chunk `cur` here at all.
void DoubleRingMember::emit_step() {
  const KvReach& reach = *reach_;
  const RingSeat& seat = seat_;
  auto kv = [&](int chunk) { return object_at(objs_->kv, chunk); };
  const int p = seat.rank();
  const int o = o_, t = t_;
  const int m = seat.kv_node(o);
  const int steps = reach.inner_steps[static_cast<std::size_t>(o)];
  const int cur = seat.chunk(m, t);
  const bool held = reach.holds(cur, o, t);
  const bool inner_step = t + 1 < steps;
  const bool outer_step = t == 0 && o + 1 < reach.outer_steps;
  if (inner_step || outer_step) {
    const int g = groups_->take(p);
    if (inner_step) {
      const int next = seat.chunk(m, t + 1);
      if (held && reach.holds(cur, o, t + 1)) build_.send(p, kv(cur), seat.inner_next, g);
      if (reach.holds(next, o, t + 1)) build_.recv(p, kv(next), seat.inner_prev, g, last_free_);
    }
    if (outer_step) {
      const int slot = seat.chunk((m - 1 + seat.n) % seat.n, 0);
      if (held && reach.holds(cur, o + 1, 0)) build_.send(p, kv(cur), seat.outer_next, g);
      if (reach.holds(slot, o + 1, 0)) build_.recv(p, kv(slot), seat.outer_prev, g);
    }
  }
  if (phase_ == Phase::forward) {
    compute_forward(cur, held);
  } else {
    compute_backward(o, t, cur, held);
  }
  if (held && cur != p) last_free_ = {build_.free(p, kv(cur))};
  advance();
}

int DoubleRingMember::oldest_awaited() const {
  int oldest = std::numeric_limits<int>::max();
  for (int op : last_free_) oldest = std::min(oldest, op);
  for (int op : last_dkv_free_) oldest = std::min(oldest, op);
  return oldest;
}

void DoubleRingMember::advance() {
  if (++t_ < reach_->inner_steps[static_cast<std::size_t>(o_)]) return;
  t_ = 0;
  if (++o_ < reach_->outer_steps) return;
  o_ = 0;
  last_free_.clear();  // each pass's circulation starts afresh
  phase_ = phase_ == Phase::forward && plan_->shape.has_backward() ? Phase::backward : Phase::done;
}

void DoubleRingMember::compute_forward(int cur, bool held) {
  const int p = seat_.rank();
  if (!held || plan_->unmasked_pairs(p, cur) <= 0) return;
  const AttentionObjects& objs = *objs_;
  const int reads[] = {object_at(objs.q, p), object_at(objs.kv, cur)};
  const int writes[] = {object_at(objs.o, p), object_at(objs.lse, p)};
  build_.compute(p, p, cur, Pass::fwd, reads, writes);
}

// dKV[cur] follows KV[cur]: after the compute of inner step t it goes to the inner successor
// (k hops per outer step bring the slot's dKV back to this rank), and after the last inner
// step to the outer successor, the node that computes that slot next (n hops: the last one
// reaches home). Under a mask a branch's dKV goes straight back to the spine after its last
// hop, and the spine's straight home after its last node.
void DoubleRingMember::compute_backward(int o, int t, int cur, bool held) {
  const AttentionObjects& objs = *objs_;
  const KvReach& reach = *reach_;
  const RingSeat& seat = seat_;
  const int p = seat.rank();
  if (held && plan_->unmasked_pairs(p, cur) > 0) {
    const int reads[] = {object_at(objs.q, p), object_at(objs.kv, cur), object_at(objs.d_o, p),
                         object_at(objs.o, p), object_at(objs.lse, p)};
    const int writes[] = {object_at(objs.dq, p), object_at(objs.dkv, cur)};
    build_.compute(p, p, cur, Pass::bwd, reads, writes);
  }
  const int m = seat.kv_node(o);
  const int slot = seat.chunk(m, 0);
  const int steps = reach.inner_steps[static_cast<std::size_t>(o)];
  if (seat.k > 1) {
    const int g = groups_->take(p);
    bool sent = false;
    if (held && t < reach.branch_of(cur, o)) {
      build_.send(p, object_at(objs.dkv, cur), seat.inner_next, g);
      sent = true;
    } else if (held && t > 0 && t == reach.branch_of(cur, o)) {
      build_.send(p, object_at(objs.dkv, cur), seat.node * seat.k + (seat.i - t + seat.k) % seat.k,
                  g);
      sent = true;
    }
    const int next = seat.chunk(m, t + 1);
    if (t + 1 < seat.k && reach.holds(next, o, t + 1)) {
      build_.recv(p, object_at(objs.dkv, next), seat.inner_prev, g, last_dkv_free_);
    }
    if (t > 0 && reach.holds(slot, o, 0) && reach.branch_of(slot, o) == t) {
      build_.recv(p, object_at(objs.dkv, slot), seat.node * seat.k + (seat.i + t) % seat.k, g,
                  last_dkv_free_);
    }
    if (sent) last_dkv_free_ = {build_.free(p, object_at(objs.dkv, cur))};
  }
  if (t + 1 == steps && reach.outer_steps > 1) {
    const int spine = reach.spine_of(slot);
    const int next_slot = seat.chunk((m - 1 + seat.n) % seat.n, 0);
    const int g = groups_->take(p);
    bool sent = false;
    if (spine > o) {
      build_.send(p, object_at(objs.dkv, slot), seat.outer_next, g);
      sent = true;
    } else if (spine == o && o > 0) {
      build_.send(p, object_at(objs.dkv, slot), m * seat.k + seat.i, g);
      sent = true;
    }
    if (o + 1 < reach.outer_steps && reach.holds(next_slot, o + 1, 0)) {
      build_.recv(p, object_at(objs.dkv, next_slot), seat.outer_prev, g, last_dkv_free_);
    }
    if (o > 0 && reach.spine_of(p) == o) {
      build_.recv(p, object_at(objs.dkv, p), ((seat.node + o) % seat.n) * seat.k + seat.i, g,
                  last_dkv_free_);
    }
    if (sent) last_dkv_free_ = {build_.free(p, object_at(objs.dkv, slot))};
  }
}

}  // namespace tilesim
