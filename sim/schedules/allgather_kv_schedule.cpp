#include "sim/schedules/allgather_kv_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "sim/plan/fusing_builder.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/pairwise_exchange.hpp"

namespace tilesim {
namespace {

int at(const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; }

std::vector<int> all_ranks(int ranks) {
  std::vector<int> members(static_cast<std::size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  return members;
}

// Only the KV chunks some local query sees travel (all of them unless a window or short
// documents leave some chunk pairs empty).
bool needs(const Plan& plan, int rank, int chunk) { return plan.unmasked_pairs(rank, chunk) > 0; }

// Grouped send/recv of only the chunks each rank reads (a window, documents).
// emit: the ranks 0..emit-1 whose programs are built (all P, or an offset quotient's K).
void add_grouped_kv_allgather(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
                              int emit) {
  add_pairwise_exchange(
      plan, groups, all_ranks(plan.ranks),
      [&](int from, int to) {
        return needs(plan, to, from) ? std::vector<int>{at(objs.kv, from)} : std::vector<int>{};
      },
      emit);
}

// NCCL's ring all-gather (plan.hpp CommStyle::nccl_ring): P - 1 steps, one comm group each,
// rank r sending KV[r - s] to r + 1 and receiving KV[r - s - 1] from r - 1, so each chunk
// travels the ring once, forwarded by every rank after it arrives. Every chunk is gathered
// (ncclAllGather has no mask); only used where every rank reads every chunk.
void add_ring_kv_allgather(Plan& plan, CommGroups& groups, const AttentionObjects& objs, int emit) {
  const int p = plan.ranks;
  FusingScratch scratch;
  for (int r = 0; r < emit; ++r) {
    FusingBuilder build(plan, scratch, r, true);
    for (int s = 0; s + 1 < p; ++s) {
      const int g = groups.take(r);
      build.send(at(objs.kv, (r - s + p) % p), (r + 1) % p, g);
      build.recv(at(objs.kv, (r - s - 1 + p) % p), (r - 1 + p) % p, g);
    }
  }
}

// The KV all-gather in the plan's form (Plan::comm_style).
void add_kv_allgather(Plan& plan, CommGroups& groups, const AttentionObjects& objs, int emit) {
  if (plan.comm_style == CommStyle::nccl_ring) {
    add_ring_kv_allgather(plan, groups, objs, emit);
  } else {
    add_grouped_kv_allgather(plan, groups, objs, emit);
  }
}

void free_gathered(const Plan& plan, FusingBuilder& build, const AttentionObjects& objs, int r) {
  for (int t = 1; t < plan.ranks; ++t) {
    const int j = (r - t + plan.ranks) % plan.ranks;
    if (needs(plan, r, j)) build.free(at(objs.kv, j));
  }
}

void add_forward(Plan& plan, CommGroups& groups, const AttentionObjects& objs, int emit) {
  const int ranks = plan.ranks;
  add_kv_allgather(plan, groups, objs, emit);
  FusingScratch scratch;
  for (int r = 0; r < emit; ++r) {
    // One attention call of the local Q against the gathered KV (pairs in
    // arrival order), then the gathered chunks are dropped.
    FusingBuilder build(plan, scratch, r, true);
    for (int t = 0; t < ranks; ++t) {
      const int j = (r - t + ranks) % ranks;
      if (plan.unmasked_pairs(r, j) <= 0) continue;
      const int reads[] = {at(objs.q, r), at(objs.kv, j)};
      const int writes[] = {at(objs.o, r), at(objs.lse, r)};
      build.compute({r, j}, Pass::fwd, reads, writes);
    }
    free_gathered(plan, build, objs, r);
    build.flush();
  }
}

// The dKV partials the emitted programs name: partial (j, r) is rank r's contribution to
// dKV[j] (r != j; none on the diagonal or where the block is fully masked: an empty partial is
// neither made nor sent). The grouped reduce-scatter names every pair; NCCL's ring names the
// emitted ranks' own and the running sums, which start as rank j + 1's contribution to chunk j:
// K P + P - 2K objects for a quotient of K ranks, not P (P - 1) (4096 GPUs: 16.8M objects, 4 GB).
// The objects are made in (j, r) order, so a whole plan's ids do not depend on the form.
class DkvPartials {
 public:
  DkvPartials(Plan& plan, int emit, bool every_pair)
      : ranks_(plan.ranks), emit_(every_pair ? plan.ranks : emit) {
    const int p = ranks_;
    own_.assign(static_cast<std::size_t>(emit_) * static_cast<std::size_t>(p), -1);
    running_.assign(static_cast<std::size_t>(p), -1);
    for (int j = 0; j < p; ++j) {
      const std::int64_t c = plan.chunks[static_cast<std::size_t>(j)].tokens;
      const int next = (j + 1) % p;
      const auto add = [&](int r) {
        if (r == j || plan.unmasked_pairs(r, j) <= 0) return -1;
        return plan.add_object({Tensor::dkv, j, r, plan.shape.dkv_accumulator_bytes(c), false,
                                false, fmt::format("dKV[{}]@{}", j, r)});
      };
      // Ranks 0..emit-1, then j + 1 where it is beyond them: ascending.
      for (int r = 0; r < emit_; ++r) own_[slot(r, j)] = add(r);
      running_[static_cast<std::size_t>(j)] = next < emit_ ? own_[slot(next, j)] : add(next);
    }
  }

  // Rank `rank`'s contribution to dKV[chunk]: an emitted rank's, or the running sum's start.
  int operator()(int chunk, int rank) const {
    if (rank < emit_) return own_[slot(rank, chunk)];
    if (rank == (chunk + 1) % ranks_) return running_[static_cast<std::size_t>(chunk)];
    throw std::logic_error(
        fmt::format("dKV[{}]@{} is not made for {} emitted ranks", chunk, rank, emit_));
  }

 private:
  std::size_t slot(int rank, int chunk) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(ranks_) +
           static_cast<std::size_t>(chunk);
  }

  int ranks_;
  int emit_;
  std::vector<int> own_;      // [rank x P + chunk] for rank < emit_
  std::vector<int> running_;  // [chunk]: (chunk, chunk + 1)
};

// NCCL's ring reduce-scatter of dKV: P - 1 steps; the running sum of chunk j starts as rank
// j + 1's contribution dKV[j]@(j+1), and each rank it reaches folds in its own contribution
// (the collective's reduction, a merge op costed without a launch) and sends it on; rank j
// folds what arrives last into dKV[j]. At step s rank r sends the sum of chunk r - s - 1 and
// receives that of chunk r - s - 2. Every rank must contribute to every chunk.
template <class Part>
void add_ring_dkv_reduce_scatter(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
                                 const Part& dkv_part, int emit) {
  const int p = plan.ranks;
  auto running_sum = [&](int chunk) { return dkv_part(chunk, (chunk + 1) % p); };
  FusingScratch scratch;
  for (int r = 0; r < emit; ++r) {
    FusingBuilder build(plan, scratch, r, true);
    for (int s = 0; s + 1 < p; ++s) {
      const int sent = running_sum((r - s - 1 + p) % p);
      const int got_chunk = (r - s - 2 + 2 * p) % p;
      const int got = running_sum(got_chunk);
      const int g = groups.take(r);
      build.send(sent, (r + 1) % p, g);
      build.recv(got, (r - 1 + p) % p, g);
      build.free(sent);
      if (got_chunk == r) {
        const int partials[] = {got};
        const int targets[] = {at(objs.dkv, r)};
        build.merge(partials, targets);
        build.free(got);
      } else {
        const int own = dkv_part(got_chunk, r);
        const int partials[] = {own};
        const int targets[] = {got};
        build.merge(partials, targets);
        build.free(own);
      }
    }
  }
}

void add_backward(Plan& plan, CommGroups& groups, const AttentionObjects& objs, int emit) {
  const int ranks = plan.ranks;
  const DkvPartials partial(plan, emit, plan.comm_style != CommStyle::nccl_ring);
  auto dkv_part = [&](int chunk, int rank) {
    return chunk == rank ? at(objs.dkv, chunk) : partial(chunk, rank);
  };
  add_kv_allgather(plan, groups, objs, emit);
  FusingScratch scratch;
  for (int r = 0; r < emit; ++r) {
    // One backward call of the local Q, dO against the gathered KV: dQ[r] and a
    // dKV contribution to every chunk, in the gathered (global) coordinates.
    FusingBuilder build(plan, scratch, r, true);
    for (int t = 0; t < ranks; ++t) {
      const int j = (r - t + ranks) % ranks;
      if (plan.unmasked_pairs(r, j) <= 0) continue;
      const int reads[] = {at(objs.q, r), at(objs.kv, j), at(objs.d_o, r), at(objs.o, r),
                           at(objs.lse, r)};
      const int writes[] = {at(objs.dq, r), dkv_part(j, r)};
      build.compute({r, j}, Pass::bwd, reads, writes);
    }
    free_gathered(plan, build, objs, r);
    build.flush();
  }
  if (plan.comm_style == CommStyle::nccl_ring) {
    add_ring_dkv_reduce_scatter(plan, groups, objs, dkv_part, emit);
    return;
  }
  // Reduce-scatter of dKV as grouped send/recv: rank `from` sends its partial of
  // chunk `to` to `to`, which sums the P-1 partials into its own dKV.
  add_pairwise_exchange(
      plan, groups, all_ranks(ranks),
      [&](int from, int to) {
        const int obj = dkv_part(to, from);
        return obj < 0 ? std::vector<int>{} : std::vector<int>{obj};
      },
      emit);
  for (int r = 0; r < emit; ++r) {
    FusingBuilder build(plan, scratch, r, true);
    std::vector<int> received;
    for (int x = 0; x < ranks; ++x) {
      if (x == r) continue;
      const int sent = dkv_part(x, r);
      if (sent >= 0) build.free(sent);
      const int got = dkv_part(r, x);
      if (got >= 0) received.push_back(got);
    }
    if (received.empty()) continue;
    const int targets[] = {at(objs.dkv, r)};
    build.merge(received, targets);
    for (int obj : received) build.free(obj);
  }
}

// The programs of ranks 0..emit-1 of the P-rank plan relabelled r -> r - first_rank.
Plan build_allgather_kv(const AttentionShape& shape, int ranks, bool by_work, int emit,
                        int first_rank) {
  const ChunkOwnership ownership = by_work        ? ChunkOwnership::work
                                   : shape.causal ? ChunkOwnership::zigzag
                                                  : ChunkOwnership::contiguous;
  Plan plan = make_chunked_plan("allgather_kv", shape, ranks, ownership);
  rotate_chunk_contents(plan, first_rank);
  plan.tile_a = 1;
  plan.tile_b = ranks;
  if (allgather_kv_uses_nccl_ring(shape, by_work)) {
    plan.comm_style = CommStyle::nccl_ring;
    plan.collective_ranks = ranks;
  }
  const AttentionObjects objs = add_attention_objects(plan);
  CommGroups groups(ranks);
  if (shape.has_forward()) add_forward(plan, groups, objs, emit);
  if (shape.has_backward()) add_backward(plan, groups, objs, emit);
  return plan;
}

}  // namespace

bool allgather_kv_uses_nccl_ring(const AttentionShape& shape, bool by_work) {
  return !shape.mask.may_leave_pairs_empty() && !(by_work && shape.mask.hides_future());
}

Plan make_allgather_kv_plan(const AttentionShape& shape, int ranks, bool by_work) {
  return build_allgather_kv(shape, ranks, by_work, ranks, 0);
}

std::string allgather_kv_cost_warning(const ScheduleSpec& spec, const AttentionShape& shape) {
  if (spec.kind != "allgather_kv") return {};
  if (allgather_kv_uses_nccl_ring(shape, spec.balance == TokenBalance::work)) return {};
  const int per_node = std::min(spec.gpus, std::max(1, spec.gpus_per_node));
  if (per_node < 2 || spec.gpus <= per_node) return {};
  const bool backward = shape.has_backward();
  return fmt::format(
      "schedule.kind allgather_kv: under this mask the KV all-gather{} costed as grouped "
      "send/recv of the chunks each rank reads, which sends a chunk across the network once per "
      "receiving GPU; NCCL's ring {} typically send{} it into each node once (its channels "
      "enter a node by different NICs): with {} ranks of the group per node the cross-node time "
      "is over-estimated, up to {}x (docs/schedules.md, All-gather KV)",
      backward ? " and the dKV reduce-scatter are" : " is",
      backward ? "all-gather and reduce-scatter" : "all-gather", backward ? "" : "s", per_node,
      per_node);
}

Plan make_allgather_kv_classes_plan(const AttentionShape& shape, int ranks, int classes,
                                    int first_rank) {
  if (classes < 1 || classes >= ranks || ranks % classes != 0 || first_rank < 0 ||
      first_rank >= ranks || first_rank % classes != 0) {
    throw std::invalid_argument(fmt::format(
        "an all-gather KV quotient plan takes classes dividing {}, below it, and a first rank "
        "a multiple of them",
        ranks));
  }
  Plan plan = build_allgather_kv(shape, ranks, false, classes, first_rank);
  keep_class_programs(plan, classes);
  return plan;
}

}  // namespace tilesim
