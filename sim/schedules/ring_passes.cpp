#include "sim/schedules/ring_passes.hpp"

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

// Sends one object of every key in `out` and receives the same object of every
// key in `in`, in one comm group; receives wait for `after`.
void exchange(FusingBuilder& build, CommGroups& groups, const Neighbours& n,
              const std::vector<RingKey>& out, const std::vector<RingKey>& in, int RingKey::*field,
              const std::vector<int>& after) {
  const int g = groups.take(n.rank);
  for (const RingKey& key : out) build.send(key.*field, n.next, g);
  for (const RingKey& key : in) build.recv(key.*field, n.prev, g, after);
}

// Like exchange, with explicit peers (the last backward step sends each dKV straight home).
void exchange_with(FusingBuilder& build, CommGroups& groups, int rank, int to, int from,
                   const std::vector<RingKey>& out, const std::vector<RingKey>& in,
                   int RingKey::*field, const std::vector<int>& after) {
  const int g = groups.take(rank);
  for (const RingKey& key : out) build.send(key.*field, to, g);
  for (const RingKey& key : in) build.recv(key.*field, from, g, after);
}

bool has_work(const Plan& plan, const RingMember& member, const std::vector<RingKey>& keys) {
  for (const RingQuery& q : member.queries) {
    for (const RingKey& key : keys) {
      if (plan.unmasked_pairs(q.chunk, key.chunk) > 0) return true;
    }
  }
  return false;
}

std::vector<int> free_all(FusingBuilder& build, const std::vector<RingKey>& keys,
                          int RingKey::*field) {
  std::vector<int> frees;
  for (const RingKey& key : keys) frees.push_back(build.free(key.*field));
  return frees;
}

}  // namespace

int ring_steps(const Plan& plan, const std::vector<RingMember>& ring) {
  const int m = static_cast<int>(ring.size());
  for (int s = m - 1; s > 0; --s) {
    for (int k = 0; k < m; ++k) {
      if (has_work(plan, ring[static_cast<std::size_t>(k)], bundle(ring, k - s))) return s + 1;
    }
  }
  return 1;
}

namespace {

void add_member_forward(Plan& plan, FusingScratch& scratch, const std::vector<RingMember>& ring,
                        int k, const Neighbours& n, int steps, CommGroups& groups) {
  {
    FusingBuilder build(plan, scratch, n.rank, true);
    const RingMember& self = ring[static_cast<std::size_t>(k)];
    std::vector<int> last_frees;
    for (int s = 0; s < steps; ++s) {
      const int j = k - s;
      if (s + 1 < steps)
        exchange(build, groups, n, bundle(ring, j), bundle(ring, j - 1), &RingKey::kv, last_frees);
      for (const RingQuery& q : self.queries) {
        for (const RingKey& key : bundle(ring, j)) {
          if (plan.unmasked_pairs(q.chunk, key.chunk) <= 0) continue;
          const int reads[] = {q.q, key.kv};
          const int writes[] = {q.o, q.lse};
          build.compute({q.chunk, key.chunk}, Pass::fwd, reads, writes);
        }
      }
      build.flush();  // one call per step, even where no comm op follows
      if (s > 0) last_frees = free_all(build, bundle(ring, j), &RingKey::kv);
    }
  }
}

}  // namespace

void add_ring_forward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups) {
  FusingScratch scratch;
  const int m = static_cast<int>(ring.size());
  const int steps = ring_steps(plan, ring);
  for (int k = 0; k < m; ++k)
    add_member_forward(plan, scratch, ring, k, neighbours(ring, k), steps, groups);
}

void add_ring_forward_classes(Plan& plan, const std::vector<RingMember>& ring, int classes,
                              CommGroups& groups) {
  FusingScratch scratch;
  const int steps = ring_steps(plan, ring);
  const auto rank_of = [&](int k) { return ring[static_cast<std::size_t>(k)].rank; };
  for (int k = 0; k < classes; ++k) {
    const Neighbours n{rank_of(k), rank_of((k + 1) % classes),
                       rank_of((k - 1 + classes) % classes)};
    add_member_forward(plan, scratch, ring, k, n, steps, groups);
  }
}

void add_ring_backward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups) {
  FusingScratch scratch;
  const int m = static_cast<int>(ring.size());
  const int steps = ring_steps(plan, ring);
  for (int k = 0; k < m; ++k) {
    const Neighbours n = neighbours(ring, k);
    FusingBuilder build(plan, scratch, n.rank, true);
    const RingMember& self = ring[static_cast<std::size_t>(k)];
    std::vector<int> last_kv_frees, last_dkv_frees;
    for (int s = 0; s < steps; ++s) {
      const int j = k - s;
      if (s + 1 < steps)
        exchange(build, groups, n, bundle(ring, j), bundle(ring, j - 1), &RingKey::kv,
                 last_kv_frees);
      for (const RingQuery& q : self.queries) {
        for (const RingKey& key : bundle(ring, j)) {
          if (plan.unmasked_pairs(q.chunk, key.chunk) <= 0) continue;
          const int reads[] = {q.q, key.kv, q.d_o, q.o, q.lse};
          const int writes[] = {q.dq, key.dkv};
          build.compute({q.chunk, key.chunk}, Pass::bwd, reads, writes);
        }
      }
      build.flush();
      if (steps > 1 && s + 1 < steps) {
        exchange(build, groups, n, bundle(ring, j), bundle(ring, j - 1), &RingKey::dkv,
                 last_dkv_frees);
        last_dkv_frees = free_all(build, bundle(ring, j), &RingKey::dkv);
      } else if (steps > 1) {
        // Last step: bundle j's dKV holds every contribution; it goes straight to its home
        // member k - steps + 1 (the next member when the ring is whole), and this member's own
        // dKV comes from member k + steps - 1.
        const int home = ring[static_cast<std::size_t>(((k - steps + 1) % m + m) % m)].rank;
        const int from = ring[static_cast<std::size_t>((k + steps - 1) % m)].rank;
        exchange_with(build, groups, n.rank, home, from, bundle(ring, j), bundle(ring, k),
                      &RingKey::dkv, last_dkv_frees);
        last_dkv_frees = free_all(build, bundle(ring, j), &RingKey::dkv);
      }
      if (s > 0) last_kv_frees = free_all(build, bundle(ring, j), &RingKey::kv);
    }
  }
}

}  // namespace tilesim
