#include "sim/schedules/double_ring_schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>

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

// The KV circulation of one pass (double_ring_schedule.hpp); `step(m, t, cur)`
// emits the compute (and what follows it) of inner step t of outer step o.
template <typename Step>
void circulate_kv(ProgramBuilder& build, CommGroups& groups, const AttentionObjects& objs,
                  const RingSeat& seat, Step step) {
  auto kv = [&](int chunk) { return objs.kv[static_cast<std::size_t>(chunk)]; };
  const int p = seat.rank();
  std::vector<int> last_free;
  for (int o = 0; o < seat.n; ++o) {
    const int m = seat.kv_node(o);
    for (int t = 0; t < seat.k; ++t) {
      const int cur = seat.chunk(m, t);
      const bool inner_step = t + 1 < seat.k;
      const bool outer_step = t == 0 && o + 1 < seat.n;
      if (inner_step || outer_step) {
        const int g = groups.take(p);
        if (inner_step) {
          build.send(p, kv(cur), seat.inner_next, g);
          build.recv(p, kv(seat.chunk(m, t + 1)), seat.inner_prev, g, last_free);
        }
        if (outer_step) {
          build.send(p, kv(cur), seat.outer_next, g);
          build.recv(p, kv(seat.chunk((m - 1 + seat.n) % seat.n, 0)), seat.outer_prev, g);
        }
      }
      step(o, t, cur);
      if (cur != p) last_free = {build.free(p, kv(cur))};
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

Plan double_ring_layout(const AttentionShape& shape, int ranks) {
  Plan plan = make_chunked_plan("double_ring", shape, ranks,
                                shape.causal ? ChunkOwnership::zigzag : ChunkOwnership::contiguous);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  return plan;
}

// The forward programs of ranks 0..emit_ranks-1 (peers are the full plan's ranks).
void add_double_ring_forward(Plan& plan, ProgramBuilder& build, CommGroups& groups,
                             const AttentionObjects& objs, int inner, int emit_ranks) {
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const int nodes = plan.ranks / inner;
  for (int p = 0; p < emit_ranks; ++p) {
    const RingSeat seat(p, inner, nodes);
    circulate_kv(build, groups, objs, seat, [&](int, int, int cur) {
      if (plan.unmasked_pairs(p, cur) <= 0) return;
      const int reads[] = {at(objs.q, p), at(objs.kv, cur)};
      const int writes[] = {at(objs.o, p), at(objs.lse, p)};
      build.compute(p, p, cur, Pass::fwd, reads, writes);
    });
  }
}

// The backward programs of ranks 0..emit_ranks-1 (peers are the full plan's ranks).
void add_double_ring_backward(Plan& plan, ProgramBuilder& build, CommGroups& groups,
                              const AttentionObjects& objs, int inner, int emit_ranks) {
  auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const int nodes = plan.ranks / inner;
  for (int p = 0; p < emit_ranks; ++p) {
    const RingSeat seat(p, inner, nodes);
    std::vector<int> last_dkv_free;
    // dKV[cur] follows KV[cur]: after the compute of inner step t it goes to the
    // inner successor (k hops per outer step bring the slot's dKV back to this
    // rank), and after the last inner step it goes to the outer successor, the
    // node that computes that slot next (n hops: the last one reaches home).
    circulate_kv(build, groups, objs, seat, [&](int o, int t, int cur) {
      if (plan.unmasked_pairs(p, cur) > 0) {
        const int reads[] = {at(objs.q, p), at(objs.kv, cur), at(objs.d_o, p), at(objs.o, p),
                             at(objs.lse, p)};
        const int writes[] = {at(objs.dq, p), at(objs.dkv, cur)};
        build.compute(p, p, cur, Pass::bwd, reads, writes);
      }
      const int m = seat.kv_node(o);
      if (seat.k > 1) {
        const int g = groups.take(p);
        build.send(p, at(objs.dkv, cur), seat.inner_next, g);
        build.recv(p, at(objs.dkv, seat.chunk(m, t + 1)), seat.inner_prev, g, last_dkv_free);
        last_dkv_free = {build.free(p, at(objs.dkv, cur))};
      }
      if (t + 1 == seat.k && seat.n > 1) {
        const int slot = seat.chunk(m, 0);
        const int g = groups.take(p);
        build.send(p, at(objs.dkv, slot), seat.outer_next, g);
        build.recv(p, at(objs.dkv, seat.chunk((m - 1 + seat.n) % seat.n, 0)), seat.outer_prev, g,
                   last_dkv_free);
        last_dkv_free = {build.free(p, at(objs.dkv, slot))};
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
  if (shape.has_forward()) add_double_ring_forward(plan, build, groups, objs, inner, classes);
  if (shape.has_backward()) add_double_ring_backward(plan, build, groups, objs, inner, classes);
  fold_onto_classes(plan, classes);
  return plan;
}

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner) {
  check_inner(ranks, inner);
  Plan plan = double_ring_layout(shape, ranks);
  const AttentionObjects objs = add_attention_objects(plan);
  ProgramBuilder build(plan);
  CommGroups groups(ranks);
  if (shape.has_forward()) add_double_ring_forward(plan, build, groups, objs, inner, ranks);
  if (shape.has_backward()) add_double_ring_backward(plan, build, groups, objs, inner, ranks);
  return plan;
}

}  // namespace tilesim
