#include "sim/schedules/pass_q_member.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/schedules/chunk_layouts.hpp"

namespace tilesim {
namespace {

int chunk_object(const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; }

QRoute route_towards(const Plan& plan, int direction) {
  const int p = plan.ranks;
  QRoute route{direction, std::vector<int>(static_cast<std::size_t>(p), 0), 1};
  for (int i = 0; i < p; ++i) {
    int& hops = route.hops[static_cast<std::size_t>(i)];
    for (int d = 1; d < p; ++d) {
      if (plan.unmasked_pairs(i, ((i + direction * d) % p + p) % p) > 0) hops = d;
    }
    route.steps = std::max(route.steps, 1 + hops);
  }
  return route;
}

}  // namespace

// Zigzag ownership balances a causal mask; under a window or documents contiguous chunks let
// a Q chunk stop at its farthest reader (a zigzag chunk is read on both sides of its rank).
Plan pass_q_layout(const AttentionShape& shape, int ranks) {
  const bool zigzag = shape.causal && !shape.mask.may_leave_pairs_empty();
  Plan plan = make_chunked_plan("pass_q", shape, ranks,
                                zigzag ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = ranks;
  plan.tile_b = 1;
  return plan;
}

QRoute route_q(const Plan& plan) {
  const int p = plan.ranks;
  if (!plan.shape.mask.may_leave_pairs_empty()) {
    return QRoute{1, std::vector<int>(static_cast<std::size_t>(p), p - 1), p};
  }
  QRoute forward = route_towards(plan, 1), back = route_towards(plan, -1);
  auto total = [](const QRoute& r) { return std::accumulate(r.hops.begin(), r.hops.end(), 0LL); };
  // Fewer steps first, then fewer hops (bytes); ties keep the forward ring.
  if (back.steps < forward.steps || (back.steps == forward.steps && total(back) < total(forward))) {
    return back;
  }
  return forward;
}

PassQPartials add_pass_q_partials(Plan& plan) {
  const int p = plan.ranks;
  PassQPartials partials;
  for (int parity = 0; parity < 2; ++parity) {
    partials.by_parity[parity].resize(static_cast<std::size_t>(p));
  }
  for (int i = 0; i < p; ++i) {
    bool computed_away = false;
    for (int x = 0; x < p && !computed_away; ++x) {
      computed_away = x != i && plan.unmasked_pairs(i, x) > 0;
    }
    if (!computed_away) continue;
    const std::int64_t c = plan.chunks[static_cast<std::size_t>(i)].tokens;
    for (int parity = 0; parity < 2; ++parity) {
      PassQPartial& part = partials.by_parity[parity][static_cast<std::size_t>(i)];
      part.o = plan.add_object({Tensor::o, i, i, plan.shape.o_accumulator_bytes(c), false, false,
                                fmt::format("O[{}]@peer{}", i, parity)});
      part.lse = plan.add_object({Tensor::lse, i, i, plan.shape.lse_bytes(c), false, false,
                                  fmt::format("LSE[{}]@peer{}", i, parity)});
    }
  }
  return partials;
}

PassQMember::PassQMember(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
                         const PassQPartials& partials, const QRoute& route, int rank)
    : plan_(&plan),
      build_(plan),
      groups_(&groups),
      objs_(&objs),
      partials_(&partials),
      route_(&route),
      rank_(rank) {}

int PassQMember::wrap(int x) const {
  const int p = static_cast<int>(route_->hops.size());
  return ((x % p) + p) % p;
}

void PassQMember::merge_pending() {
  if (to_merge_.o < 0) return;
  const int r = rank_;
  const int parts[] = {to_merge_.o, to_merge_.lse};
  const int targets[] = {chunk_object(objs_->o, r), chunk_object(objs_->lse, r)};
  build_.merge(r, parts, targets);
  build_.free(r, to_merge_.o);
  build_.free(r, to_merge_.lse);
  to_merge_ = PassQPartial{};
}

int PassQMember::oldest_awaited() const {
  return last_free_.empty() ? std::numeric_limits<int>::max() : last_free_.front();
}

void PassQMember::emit_step() {
  const QRoute& route = *route_;
  const int r = rank_, s = step_, dir = route.direction;
  const int next = wrap(r + dir), prev = wrap(r - dir);
  // Step s: rank r holds Q[i] if Q[i] travels at least s hops.
  const int i = wrap(r - dir * s);
  const int incoming = wrap(r - dir * (s + 1));
  const bool holds = route.held_at_step(i, s);
  const bool sends = holds && route.held_at_step(i, s + 1);
  const bool receives = s + 1 < route.steps && route.held_at_step(incoming, s + 1);
  if (sends || receives) {
    const int g = groups_->take(r);
    if (sends) build_.send(r, chunk_object(objs_->q, i), next, g);
    if (receives) build_.recv(r, chunk_object(objs_->q, incoming), prev, g, last_free_);
  }
  // This step's block of Q[i]: into the owner's accumulators at s = 0, else into a partial
  // (only where the block has work: a fully masked partial is neither computed nor sent).
  const bool computes = holds && (s == 0 || plan_->unmasked_pairs(i, r) > 0);
  const PassQPartial out =
      !computes ? PassQPartial{}
      : s == 0  ? PassQPartial{chunk_object(objs_->o, r), chunk_object(objs_->lse, r)}
                : partials_->at(i, s);
  if (out.o >= 0) {
    const int reads[] = {chunk_object(objs_->q, i), chunk_object(objs_->kv, r)};
    const int writes[] = {out.o, out.lse};
    build_.compute(r, i, r, Pass::fwd, reads, writes);
  }
  merge_pending();
  if (s > 0) {
    // The partial of Q[r] computed this step at the rank Q[r] reached, s hops away.
    const int computing = wrap(r + dir * s);
    const PassQPartial in = plan_->unmasked_pairs(r, computing) > 0 && route.held_at_step(r, s)
                                ? partials_->at(r, s)
                                : PassQPartial{};
    if (out.o >= 0 || in.o >= 0) {
      const int g = groups_->take(r);
      if (out.o >= 0) {
        build_.send(r, out.o, i, g);
        build_.send(r, out.lse, i, g);
      }
      if (in.o >= 0) {
        build_.recv(r, in.o, computing, g);
        build_.recv(r, in.lse, computing, g);
      }
    }
    if (out.o >= 0) {
      build_.free(r, out.o);
      build_.free(r, out.lse);
    }
    to_merge_ = in;
    if (holds) last_free_ = {build_.free(r, chunk_object(objs_->q, i))};
  }
  ++step_;
  if (done()) merge_pending();
}

}  // namespace tilesim
