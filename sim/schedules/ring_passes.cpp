#include "sim/schedules/ring_passes.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>

#include "sim/plan/fusing_builder.hpp"

namespace tilesim {
namespace {

struct Neighbours {
  int rank, next, prev;
};

Neighbours neighbours(const std::vector<RingMember>& ring, int k) {
  const int m = static_cast<int>(ring.size());
  return {ring[static_cast<std::size_t>(k)].rank, ring[static_cast<std::size_t>((k + 1) % m)].rank,
          ring[static_cast<std::size_t>((k - 1 + m) % m)].rank};
}

const std::vector<RingKey>& bundle(const std::vector<RingMember>& ring, int j) {
  const int m = static_cast<int>(ring.size());
  return ring[static_cast<std::size_t>(((j % m) + m) % m)].keys;
}

const std::vector<RingKey>& back_bundle(const std::vector<RingMember>& ring, int j) {
  const int m = static_cast<int>(ring.size());
  return ring[static_cast<std::size_t>(((j % m) + m) % m)].back_keys;
}

const RingMember& member(const std::vector<RingMember>& ring, int k) {
  const int m = static_cast<int>(ring.size());
  return ring[static_cast<std::size_t>(((k % m) + m) % m)];
}

// One direction's traffic of a comm group: `out` goes to `to`, `in` comes from `from`.
struct Leg {
  std::span<const RingKey> out;
  int to = -1;
  std::span<const RingKey> in;
  int from = -1;
};

// Sends one object of every key of each leg's `out` and receives the same object of every key
// of its `in`, in one comm group (sends first, then receives, in leg order); receives wait for
// `after`.
void exchange_legs(FusingBuilder& build, CommGroups& groups, int rank, std::span<const Leg> legs,
                   int RingKey::*field, const std::vector<int>& after) {
  const int g = groups.take(rank);
  for (const Leg& leg : legs)
    for (const RingKey& key : leg.out) build.send(key.*field, leg.to, g);
  for (const Leg& leg : legs)
    for (const RingKey& key : leg.in) build.recv(key.*field, leg.from, g, after);
}

bool has_work(const Plan& plan, const RingMember& member, const std::vector<RingKey>& keys) {
  for (const RingQuery& q : member.queries) {
    for (const RingKey& key : keys) {
      if (plan.unmasked_pairs(q.chunk, key.chunk) > 0) return true;
    }
  }
  return false;
}

void append_frees(FusingBuilder& build, std::span<const RingKey> keys, int RingKey::*field,
                  std::vector<int>& frees) {
  for (const RingKey& key : keys) frees.push_back(build.free(key.*field));
}

// The bundles member k holds in step s: forward bundle k-s while s < n_f, back bundle k+s while
// s < n_b (empty otherwise).
// The keys of `keys` that travel at least `hops` hops (all of them when none has a hop count
// and hops <= uniform, the direction's n - 1).
std::span<const RingKey> reaching(std::span<const RingKey> keys, int hops, int uniform,
                                  std::vector<RingKey>& scratch) {
  bool explicit_hops = false;
  for (const RingKey& key : keys) explicit_hops = explicit_hops || key.hops >= 0;
  if (!explicit_hops) return hops <= uniform ? keys : std::span<const RingKey>{};
  scratch.clear();
  for (const RingKey& key : keys) {
    if ((key.hops >= 0 ? key.hops : uniform) >= hops) scratch.push_back(key);
  }
  return scratch;
}

std::span<const RingKey> ending(std::span<const RingKey> keys, int hops, int uniform,
                                std::vector<RingKey>& scratch) {
  scratch.clear();
  for (const RingKey& key : keys) {
    if ((key.hops >= 0 ? key.hops : uniform) == hops) scratch.push_back(key);
  }
  return scratch;
}

// What member k handles in step s of a ring with n_f forward and n_b back steps: the keys it
// holds (forward bundle k-s, back bundle k+s, those reaching this far), the ones it forwards,
// the ones it receives for step s+1, and (backward) the held ones whose last hop this is and
// its own keys whose dKV comes home now. Spans point into this struct's vectors.
struct StepKeys {
  std::span<const RingKey> fwd, back, fwd_out, back_out, fwd_in, back_in;
  std::span<const RingKey> fwd_last, back_last, fwd_home, back_home;
  std::vector<RingKey> v[10];
};

void step_keys(const std::vector<RingMember>& ring, int k, int s, int n_f, int n_b, StepKeys& t) {
  const int uf = n_f - 1, ub = n_b - 1;
  t.fwd = reaching(bundle(ring, k - s), s, uf, t.v[0]);
  t.back = reaching(back_bundle(ring, k + s), s, ub, t.v[1]);
  t.fwd_out = reaching(t.fwd, s + 1, uf, t.v[2]);
  t.back_out = reaching(t.back, s + 1, ub, t.v[3]);
  t.fwd_in = reaching(bundle(ring, k - s - 1), s + 1, uf, t.v[4]);
  t.back_in = reaching(back_bundle(ring, k + s + 1), s + 1, ub, t.v[5]);
  t.fwd_last = s > 0 ? ending(t.fwd, s, uf, t.v[6]) : std::span<const RingKey>{};
  t.back_last = s > 0 ? ending(t.back, s, ub, t.v[7]) : std::span<const RingKey>{};
  t.fwd_home = s > 0 ? ending(bundle(ring, k), s, uf, t.v[8]) : std::span<const RingKey>{};
  t.back_home = s > 0 ? ending(back_bundle(ring, k), s, ub, t.v[9]) : std::span<const RingKey>{};
}

// The comm legs that prefetch step s+1's keys (empty legs left out).
std::vector<Leg> prefetch_legs(const StepKeys& t, const Neighbours& n) {
  std::vector<Leg> legs;
  if (!t.fwd_out.empty() || !t.fwd_in.empty())
    legs.push_back({t.fwd_out, n.next, t.fwd_in, n.prev});
  if (!t.back_out.empty() || !t.back_in.empty())
    legs.push_back({t.back_out, n.prev, t.back_in, n.next});
  return legs;
}

void add_computes(const Plan& plan, FusingBuilder& build, const RingMember& self,
                  std::span<const RingKey> keys, Pass pass) {
  for (const RingQuery& q : self.queries) {
    for (const RingKey& key : keys) {
      if (plan.unmasked_pairs(q.chunk, key.chunk) <= 0) continue;
      if (pass == Pass::fwd) {
        const int reads[] = {q.q, key.kv};
        const int writes[] = {q.o, q.lse};
        build.compute({q.chunk, key.chunk}, Pass::fwd, reads, writes);
      } else {
        const int reads[] = {q.q, key.kv, q.d_o, q.o, q.lse};
        const int writes[] = {q.dq, key.dkv};
        build.compute({q.chunk, key.chunk}, Pass::bwd, reads, writes);
      }
    }
  }
}

// The key blocks a query block may see, [first, last], on the contiguous layout (block i holds
// positions [i c, (i + 1) c)): the hull of the positions its queries [a, b) see: full [0, S),
// causal [0, b), sliding window [a - W + 1, b), documents [start of a's document, b).
std::pair<int, int> visible_key_blocks(const Plan& plan, int q_block) {
  const TokenLayout& layout = plan.layout;
  const AttentionMask& mask = plan.shape.mask;
  const std::int64_t c = layout.block_tokens();
  const std::int64_t a = layout.block_start(q_block), b = a + c;
  std::int64_t lo = 0, hi = layout.seq_len;
  switch (mask.kind) {
    case AttentionMaskKind::full:
      break;
    case AttentionMaskKind::causal:
      hi = b;
      break;
    case AttentionMaskKind::sliding_window:
      lo = std::max<std::int64_t>(0, a - mask.window_tokens + 1);
      hi = b;
      break;
    case AttentionMaskKind::documents:
      lo = mask.document_start(a);
      hi = b;
      break;
  }
  return {static_cast<int>(lo / c), static_cast<int>((hi - 1) / c)};
}

// The (reader, owner, key) triples of one direction's keys (`keys`, or `back_keys` when `back`;
// key indexes the owner's list) where the reader has unmasked pairs with the key: what
// has_work answers for every member and key, found from candidate key blocks. On the contiguous
// layout a query block's candidates are the key blocks of its visible hull (a window's are a few
// where every block's are P); on others (a striped block spans the sequence) or where a block is in
// two keys of the ring, every key block. visit(reader, owner, key) may see a triple more than once.
class KeyReaders {
 public:
  KeyReaders(const Plan& plan, const std::vector<RingMember>& ring, bool back)
      : plan_(plan),
        ring_(ring),
        owner_(static_cast<std::size_t>(plan.layout.blocks), -1),
        key_of_(owner_.size(), -1) {
    hulls_ = plan.layout.kind == LayoutKind::contiguous;
    for (std::size_t j = 0; j < ring.size(); ++j) {
      const std::vector<RingKey>& keys = back ? ring[j].back_keys : ring[j].keys;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        for (int block : plan.chunks[static_cast<std::size_t>(keys[i].chunk)].blocks) {
          const auto b = static_cast<std::size_t>(block);
          if (owner_[b] >= 0) hulls_ = false;
          owner_[b] = static_cast<int>(j);
          key_of_[b] = static_cast<int>(i);
          key_blocks_.push_back(block);
        }
      }
    }
    std::sort(key_blocks_.begin(), key_blocks_.end());
  }

  // Whether visit() checks a few key blocks per query block: hulls on the contiguous layout
  // under a window or documents (under the full or causal mask a hull holds most of the keys).
  bool narrowed() const { return hulls_ && plan_.shape.mask.may_leave_pairs_empty(); }

  template <class Visit>
  void visit(Visit visit) const {
    for_each_query_block([&](int reader, int q_block) {
      for (int block : hulls_ ? hull(q_block) : std::span<const int>(key_blocks_)) {
        const auto b = static_cast<std::size_t>(block);
        if (owner_[b] >= 0 && plan_.layout.unmasked_pairs(q_block, block, plan_.shape.mask) > 0) {
          visit(reader, owner_[b], key_of_[b]);
        }
      }
    });
  }

 private:
  template <class F>
  void for_each_query_block(F f) const {
    for (std::size_t k = 0; k < ring_.size(); ++k) {
      for (const RingQuery& q : ring_[k].queries) {
        for (int block : plan_.chunks[static_cast<std::size_t>(q.chunk)].blocks) {
          f(static_cast<int>(k), block);
        }
      }
    }
  }
  // The key blocks of the ring inside q_block's visible hull.
  std::span<const int> hull(int q_block) const {
    const auto [first, last] = visible_key_blocks(plan_, q_block);
    const auto begin = std::lower_bound(key_blocks_.begin(), key_blocks_.end(), first);
    const auto end = std::upper_bound(begin, key_blocks_.end(), last);
    return {begin, end};
  }

  const Plan& plan_;
  const std::vector<RingMember>& ring_;
  std::vector<int> owner_;       // key block -> the member whose key holds it; -1: none
  std::vector<int> key_of_;      // key block -> that key's index in its owner's list
  std::vector<int> key_blocks_;  // ascending
  bool hulls_ = false;
};

// The ops of the program's last comm group (one run of consecutive comm ops, other ops may sit
// between them; plan_semantics.hpp), searched back from its end; none without one.
std::vector<int> last_comm_group(const RankProgram& program) {
  std::vector<int> ops;
  int group = -1;
  for (int i = static_cast<int>(program.size()) - 1; i >= program.first_index(); --i) {
    const Op& op = program.op(i);
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    if (group >= 0 && op.comm_group != group) break;
    group = op.comm_group;
    ops.push_back(i);
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

int steps_for(const Plan& plan, const std::vector<RingMember>& ring, int sign) {
  const int m = static_cast<int>(ring.size());
  // A direction no key travels needs one step; without this check a one-way ring's back
  // direction scanned all m^2 (step, member) pairs (92% of a 65536-GPU ring run).
  const bool any_keys = std::any_of(ring.begin(), ring.end(), [&](const RingMember& member) {
    return !(sign < 0 ? member.keys : member.back_keys).empty();
  });
  if (!any_keys) return 1;
  // Narrowed (a window: each query block sees a few key blocks): the farthest reader of any
  // key, in O(P x blocks per hull), where the scan below checked (P - n) x P pairs without
  // work (5.9 s of a 16384-GPU windowed ring). Else (full, causal; striped blocks) the scan
  // from the farthest offset down, which work at or near offset m - 1 ends at once. Both give
  // the same steps (tests/test_ring_steps.cpp). Under the full and causal masks no reader
  // index is built.
  if (plan.shape.mask.may_leave_pairs_empty()) {
    if (const KeyReaders readers(plan, ring, sign > 0); readers.narrowed()) {
      int farthest = 0;
      readers.visit([&](int reader, int owner, int /*key*/) {
        farthest = std::max(farthest, ((sign < 0 ? reader - owner : owner - reader) % m + m) % m);
      });
      return farthest + 1;
    }
  }
  for (int s = m - 1; s > 0; --s) {
    for (int k = 0; k < m; ++k) {
      const auto& keys = sign < 0 ? bundle(ring, k - s) : back_bundle(ring, k + s);
      if (has_work(plan, member(ring, k), keys)) return s + 1;
    }
  }
  return 1;
}

}  // namespace

int ring_steps(const Plan& plan, const std::vector<RingMember>& ring) {
  return steps_for(plan, ring, -1);
}

int ring_back_steps(const Plan& plan, const std::vector<RingMember>& ring) {
  return steps_for(plan, ring, +1);
}

void route_keys_by_readers(const Plan& plan, std::vector<RingMember>& ring) {
  const int m = static_cast<int>(ring.size());
  const int one_way = ring_steps(plan, ring);
  // Per key: its farthest reader towards k+1 and towards k-1 (offsets 1..m-1; 0: none).
  std::vector<std::vector<std::pair<int, int>>> farthest(ring.size());
  for (std::size_t k = 0; k < ring.size(); ++k) farthest[k].assign(ring[k].keys.size(), {0, 0});
  KeyReaders(plan, ring, false).visit([&](int reader, int owner, int key) {
    if (reader == owner) return;
    auto& [forward, back] =
        farthest[static_cast<std::size_t>(owner)][static_cast<std::size_t>(key)];
    forward = std::max(forward, ((reader - owner) % m + m) % m);
    back = std::max(back, ((owner - reader) % m + m) % m);
  });
  std::vector<RingMember> two_way = ring, forward_only = ring;
  for (int k = 0; k < m; ++k) {
    const auto i = static_cast<std::size_t>(k);
    two_way[i].keys.clear();
    forward_only[i].keys.clear();
    for (std::size_t n = 0; n < ring[i].keys.size(); ++n) {
      const auto [forward, back] = farthest[i][n];
      RingKey routed = ring[i].keys[n];
      routed.hops = forward;
      forward_only[i].keys.push_back(routed);
      routed.hops = std::min(forward, back);
      (forward <= back ? two_way[i].keys : two_way[i].back_keys).push_back(routed);
    }
  }
  const int two_way_steps = std::max(ring_steps(plan, two_way), ring_back_steps(plan, two_way));
  ring = two_way_steps < one_way ? std::move(two_way) : std::move(forward_only);
}

RingMemberSteps::RingMemberSteps(Plan& plan, FusingScratch& scratch,
                                 const std::vector<RingMember>& ring, int k, int forward_steps,
                                 int back_steps, CommGroups& groups)
    : plan_(plan),
      ring_(ring),
      groups_(groups),
      build_(plan, scratch, ring[static_cast<std::size_t>(k)].rank, true),
      k_(k),
      n_f_(forward_steps),
      n_b_(back_steps) {}

RingMemberForward::RingMemberForward(Plan& plan, FusingScratch& scratch,
                                     const std::vector<RingMember>& ring, int k, int next, int prev,
                                     int forward_steps, int back_steps, CommGroups& groups)
    : RingMemberSteps(plan, scratch, ring, k, forward_steps, back_steps, groups),
      rank_(ring[static_cast<std::size_t>(k)].rank),
      next_(next),
      prev_(prev) {}

void RingMemberForward::emit_step() {
  const RingMember& self = ring_[static_cast<std::size_t>(k_)];
  const int s = step_++;
  StepKeys t;
  step_keys(ring_, k_, s, n_f_, n_b_, t);
  const std::vector<Leg> legs = prefetch_legs(t, {rank_, next_, prev_});
  if (!legs.empty()) exchange_legs(build_, groups_, rank_, legs, &RingKey::kv, last_frees_);
  add_computes(plan_, build_, self, t.fwd, Pass::fwd);
  add_computes(plan_, build_, self, t.back, Pass::fwd);
  build_.flush();  // one call per step, even where no comm op follows
  if (s > 0) {
    last_frees_.clear();
    append_frees(build_, t.fwd, &RingKey::kv, last_frees_);
    append_frees(build_, t.back, &RingKey::kv, last_frees_);
  }
}

namespace {

void add_member_forward(Plan& plan, FusingScratch& scratch, const std::vector<RingMember>& ring,
                        int k, const Neighbours& n, int n_f, int n_b, CommGroups& groups) {
  RingMemberForward member(plan, scratch, ring, k, n.next, n.prev, n_f, n_b, groups);
  while (!member.done()) member.emit_step();
}

}  // namespace

void add_ring_forward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups) {
  FusingScratch scratch;
  const int m = static_cast<int>(ring.size());
  const int n_f = ring_steps(plan, ring), n_b = ring_back_steps(plan, ring);
  for (int k = 0; k < m; ++k)
    add_member_forward(plan, scratch, ring, k, neighbours(ring, k), n_f, n_b, groups);
}

void add_ring_forward_classes(Plan& plan, const std::vector<RingMember>& ring, int classes,
                              CommGroups& groups) {
  FusingScratch scratch;
  const int n_f = ring_steps(plan, ring), n_b = ring_back_steps(plan, ring);
  const auto rank_of = [&](int k) { return ring[static_cast<std::size_t>(k)].rank; };
  for (int k = 0; k < classes; ++k) {
    const Neighbours n{rank_of(k), rank_of((k + 1) % classes),
                       rank_of((k - 1 + classes) % classes)};
    add_member_forward(plan, scratch, ring, k, n, n_f, n_b, groups);
  }
}

void add_ring_backward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups,
                       int emit_members, bool wait_for_forward) {
  FusingScratch scratch;
  const int m = static_cast<int>(ring.size());
  const int n_f = ring_steps(plan, ring), n_b = ring_back_steps(plan, ring);
  for (int k = 0; k < (emit_members >= 0 ? emit_members : m); ++k) {
    RingMemberBackward member(plan, scratch, ring, k, n_f, n_b, groups, wait_for_forward);
    while (!member.done()) member.emit_step();
  }
}

void RingMemberBackward::emit_step() {
  const Neighbours n = neighbours(ring_, k_);
  const RingMember& self = ring_[static_cast<std::size_t>(k_)];
  const int k = k_, s = step_++;
  StepKeys t;
  step_keys(ring_, k, s, n_f_, n_b_, t);
  if (s == 0 && wait_for_forward_) {
    build_.wait_before_next_compute(
        last_comm_group(plan_.programs[static_cast<std::size_t>(n.rank)]));
  }
  const std::vector<Leg> legs = prefetch_legs(t, n);
  if (!legs.empty()) exchange_legs(build_, groups_, n.rank, legs, &RingKey::kv, last_kv_frees_);
  add_computes(plan_, build_, self, t.fwd, Pass::bwd);
  add_computes(plan_, build_, self, t.back, Pass::bwd);
  build_.flush();
  // dKV follows its KV; after a key's last hop its dKV, now holding every contribution, goes
  // straight to its owner (k - s forward, k + s back: the neighbour when the ring is whole),
  // and this member's own keys whose last hop is this step come home from k + s / k - s.
  std::vector<Leg> dkv_legs;
  if (!t.fwd_out.empty() || !t.fwd_in.empty())
    dkv_legs.push_back({t.fwd_out, n.next, t.fwd_in, n.prev});
  if (!t.fwd_last.empty() || !t.fwd_home.empty())
    dkv_legs.push_back(
        {t.fwd_last, member(ring_, k - s).rank, t.fwd_home, member(ring_, k + s).rank});
  if (!t.back_out.empty() || !t.back_in.empty())
    dkv_legs.push_back({t.back_out, n.prev, t.back_in, n.next});
  if (!t.back_last.empty() || !t.back_home.empty())
    dkv_legs.push_back(
        {t.back_last, member(ring_, k + s).rank, t.back_home, member(ring_, k - s).rank});
  if (!dkv_legs.empty()) {
    exchange_legs(build_, groups_, n.rank, dkv_legs, &RingKey::dkv, last_dkv_frees_);
    last_dkv_frees_.clear();
    for (const Leg& leg : dkv_legs) append_frees(build_, leg.out, &RingKey::dkv, last_dkv_frees_);
  }
  if (s > 0) {
    last_kv_frees_.clear();
    append_frees(build_, t.fwd, &RingKey::kv, last_kv_frees_);
    append_frees(build_, t.back, &RingKey::kv, last_kv_frees_);
  }
}

}  // namespace tilesim
