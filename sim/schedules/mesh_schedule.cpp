#include "sim/schedules/mesh_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/plan/fusing_builder.hpp"
#include "sim/plan/rank_relabel.hpp"
#include "sim/schedules/attention_objects.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/chunked_objects.hpp"
#include "sim/schedules/class_plan.hpp"
#include "sim/schedules/mesh_memory.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_relay.hpp"

namespace tilesim {
namespace {

std::size_t at(int i) { return static_cast<std::size_t>(i); }

Plan make_mesh_layout(const AttentionShape& shape, int ranks) {
  Plan plan = make_contiguous_plan("mesh", shape, ranks);
  if (!shape.causal) return plan;
  if (shape.seq_len % (2 * ranks) != 0) {
    throw ScheduleError("attention.seq_len",
                        fmt::format("causal mesh cuts seq_len {} into 2 x {} zigzag blocks; it "
                                    "does not divide evenly",
                                    shape.seq_len, ranks));
  }
  plan.layout.blocks = 2 * ranks;
  for (int r = 0; r < ranks; ++r) plan.chunks[at(r)].blocks = {r, 2 * ranks - 1 - r};
  return plan;
}

// Full and causal (zigzag) masks give every chunk pair work and keep the rings; a sliding
// window or packed documents may leave pairs empty, and then every chunk and partial goes
// straight to the members that read it (mesh_relay.hpp, direct).
bool mask_may_empty_pairs(const Plan& plan) { return plan.shape.mask.may_leave_pairs_empty(); }

// The Q ring of rank g: members tr*a + y (tr = kv_pos(g)) share the Q chunks tr*a + x, and
// member y's KV chunks are y + a*k.
MeshRelay q_relay(const Plan& plan, MeshTile tile, int tr) {
  const int a = tile.a;
  if (!mask_may_empty_pairs(plan)) return MeshRelay(a, {});
  std::vector<std::uint8_t> needs(at(a * a), 0);
  for (int y = 0; y < a; ++y) {
    for (int x = 0; x < a; ++x) {
      for (int k = 0; k < tile.b && !needs[at(y * a + x)]; ++k) {
        needs[at(y * a + x)] = plan.unmasked_pairs(tr * a + x, y + a * k) > 0;
      }
    }
  }
  return MeshRelay(a, std::move(needs), true);
}

// The KV ring of rank g: members z*a + tc (tc = q_pos(g)) share the KV chunks tc + a*x, and
// member z's Q chunks are z*a + j.
MeshRelay kv_relay(const Plan& plan, MeshTile tile, int tc) {
  const int a = tile.a, b = tile.b;
  if (!mask_may_empty_pairs(plan)) return MeshRelay(b, {});
  std::vector<std::uint8_t> needs(at(b * b), 0);
  for (int z = 0; z < b; ++z) {
    for (int x = 0; x < b; ++x) {
      for (int j = 0; j < a && !needs[at(z * b + x)]; ++j) {
        needs[at(z * b + x)] = plan.unmasked_pairs(z * a + j, tc + a * x) > 0;
      }
    }
  }
  return MeshRelay(b, std::move(needs), true);
}

// One relay per ring, shared by its members and both passes: Q rings by kv_pos (tr), KV
// rings by q_pos (tc).
struct MeshRelays {
  std::vector<MeshRelay> q, kv;
};

MeshRelays mesh_relays(const Plan& plan, MeshTile tile) {
  MeshRelays r;
  for (int tr = 0; tr < tile.b; ++tr) r.q.push_back(q_relay(plan, tile, tr));
  for (int tc = 0; tc < tile.a; ++tc) r.kv.push_back(kv_relay(plan, tile, tc));
  return r;
}

constexpr int never = std::numeric_limits<int>::max();

// Per-ring bookkeeping of one rank: when each position's chunk arrives and is
// forwarded (comm group indices; -1 = own chunk / never forwarded; arrive = never when the
// mask leaves the chunk no hop to this rank).
struct RingTimes {
  std::vector<int> arrive;   // by position
  std::vector<int> forward;  // group that sends it on, -1 if none
  std::vector<int> freed;    // op index of its free, -1 if not yet
};

// Builds one rank's program; all ranks share the step order.
class RankBuilder {
 public:
  RankBuilder(Plan& plan, FusingScratch& scratch, const ChunkObjects& objs,
              const std::vector<int>& partial_o, const std::vector<int>& partial_lse,
              const MeshOptions& opt, const MeshRelays& relays, int rank)
      : plan_(plan),
        build_(plan, scratch, rank, opt.fuse_blocks),
        objs_(objs),
        po_(partial_o),
        pl_(partial_lse),
        opt_(opt),
        tile_(opt.tile),
        g_(rank),
        p_(tile_.q_pos(rank)),
        t_(tile_.kv_pos(rank)),
        qr_(relays.q[at(tile_.kv_pos(rank))]),
        kvr_(relays.kv[at(tile_.q_pos(rank))]) {
    const int a = tile_.a, b = tile_.b;
    q_ = ring_times(qr_, a, p_, MeshStep::q);
    kv_ = ring_times(kvr_, b, t_, MeshStep::kv);
    for (int x : kv_.arrive) {
      if (x != never) last_kv_group_ = std::max(last_kv_group_, x);
    }
    emitted_.assign(at(a * b), 0);
    kv_order_.push_back(t_);
    for (int s = 0; s < b - 1; ++s) kv_order_.push_back(kvr_.arrival(t_, s));
    cursor_.assign(at(a), 0);
    left_q_.assign(at(a), b);
    left_kv_.assign(at(b), a);
    for (int j = 0; j < a; ++j) {
      for (int k = 0; k < b; ++k) {
        if (plan_.unmasked_pairs(tile_.q_chunk(g_, j), tile_.kv_chunk(g_, k)) <= 0) mark(j, k);
      }
    }
  }

  void run() {
    const int groups = static_cast<int>(opt_.order.size());
    int q_steps = 0, kv_steps = 0, r_steps = 0;
    for (int k = 0; k <= groups; ++k) {
      // A fused op holds only blocks that the same comm group made ready: one
      // spanning two groups would wait for the later group's arrival.
      build_.flush();
      if (k < groups) {
        const MeshStep step = opt_.order[at(k)];
        if (step == MeshStep::reduce) {
          emit_blocks_of(qr_.arrival(p_, r_steps), k);
          merge_received();
        }
        if (step == MeshStep::q) comm_q(k, q_steps++);
        if (step == MeshStep::kv) comm_kv(k, kv_steps++);
        if (step == MeshStep::reduce) comm_r(k, r_steps++);
        emit_ready(k, step == MeshStep::reduce);
      } else {
        emit_ready(k, false);
        merge_received();
      }
      emit_frees(k);
    }
    build_.flush();
  }

 private:
  // When each position's chunk arrives (never: the mask gives it no transfer to this rank) and
  // which group sends it on (relays only).
  RingTimes ring_times(const MeshRelay& relay, int size, int pos, MeshStep kind) const {
    RingTimes rt;
    rt.arrive.assign(at(size), never);
    rt.forward.assign(at(size), -1);
    rt.freed.assign(at(size), -1);
    rt.arrive[at(pos)] = -1;
    std::vector<int> step_group;
    for (int k = 0; k < static_cast<int>(opt_.order.size()); ++k) {
      if (opt_.order[at(k)] != kind) continue;
      const int s = static_cast<int>(step_group.size());
      step_group.push_back(k);
      const MeshTransfer in = relay.gather_recv(pos, s);
      if (in.item >= 0) rt.arrive[at(in.item)] = k;
    }
    for (int x = 0; x < size; ++x) {
      const int st = relay.forward_step(pos, x);
      if (st >= 0) rt.forward[at(x)] = step_group[at(st)];
    }
    return rt;
  }

  // Q-ring position -> rank.
  int q_rank(int pos) const { return tile_.kv_pos(g_) * tile_.a + pos; }
  int partial(int rank, int u) const { return po_[at(rank * tile_.a + u)]; }
  int partial_lse(int rank, int u) const { return pl_[at(rank * tile_.a + u)]; }

  void mark(int j, int k) {
    emitted_[at(j * tile_.b + k)] = 1;
    --left_q_[at(j)];
    --left_kv_[at(k)];
  }

  void compute(int j, int k) {
    const int qc = tile_.q_chunk(g_, j), kc = tile_.kv_chunk(g_, k);
    const int reads[] = {objs_.q[at(qc)], objs_.kv[at(kc)]};
    const bool own = j == p_;
    const int writes[] = {own ? objs_.o[at(g_)] : partial(g_, j),
                          own ? objs_.lse[at(g_)] : partial_lse(g_, j)};
    build_.compute({qc, kc}, Pass::fwd, reads, writes);
    mark(j, k);
  }

  // Every remaining block of Q position u (its inputs arrived before `group`).
  // KV positions arrive in kv_order_, so the scan stops at the first one not
  // yet arrived, and starts after the prefix that is already emitted.
  void emit_blocks_of(int u, int comm_group) {
    if (q_.arrive[at(u)] >= comm_group) return;
    int& first = cursor_[at(u)];
    while (first < tile_.b && emitted_[at(u * tile_.b + kv_order_[at(first)])]) ++first;
    for (int i = first; i < tile_.b; ++i) {
      const int k = kv_order_[at(i)];
      // A chunk that never arrives has every pair of this rank empty, so marked.
      if (emitted_[at(u * tile_.b + k)]) continue;
      if (kv_.arrive[at(k)] >= comm_group) break;
      compute(u, k);
    }
  }

  // The own Q position's ready, not yet emitted KV positions, in arrival order.
  std::vector<int> own_ready_blocks(int comm_group) {
    std::vector<int> out;
    if (q_.arrive[at(p_)] >= comm_group) return out;
    int& first = cursor_[at(p_)];
    while (first < tile_.b && emitted_[at(p_ * tile_.b + kv_order_[at(first)])]) ++first;
    for (int i = first; i < tile_.b; ++i) {
      const int k = kv_order_[at(i)];
      if (emitted_[at(p_ * tile_.b + k)]) continue;
      if (kv_.arrive[at(k)] >= comm_group) break;
      out.push_back(k);
    }
    return out;
  }

  void emit_ready(int comm_group, bool r_phase) {
    const bool final_phase = comm_group == static_cast<int>(opt_.order.size());
    const bool hold = opt_.hold_back && tile_.a > 1;
    // Q positions in the order the R steps send their partials (p-1, p-2, ... on a ring).
    // Once every KV chunk is in, a partial may leave at the next R step, so
    // each position's blocks are an op of their own and its send waits for
    // nothing else; before that, blocks unlocked together fuse into one op.
    const bool partials_may_leave = comm_group > last_kv_group_;
    for (int s = 1; s < tile_.a; ++s) {
      emit_blocks_of(qr_.arrival(p_, s - 1), comm_group);
      if (partials_may_leave) build_.flush();
    }
    if (!hold || final_phase) {
      emit_blocks_of(p_, comm_group);
      return;
    }
    // Keep one own block per R step in reserve, all but one of them; the rest
    // run as they come.
    const int reserve = std::min(tile_.b - 1, tile_.a - 1);
    for (int k : own_ready_blocks(comm_group)) {
      if (left_q_[at(p_)] <= reserve) break;
      compute(p_, k);
    }
    if (!r_phase) return;
    // Spread the held-back own blocks evenly over the R steps and the end.
    const int r_left = remaining_r_steps(comm_group) + 1;
    int share = (left_q_[at(p_)] + r_left - 1) / r_left;
    for (int k : own_ready_blocks(comm_group)) {
      if (share == 0) break;
      compute(p_, k);
      --share;
    }
  }

  int remaining_r_steps(int comm_group) const {
    int n = 0;
    for (int k = comm_group + 1; k < static_cast<int>(opt_.order.size()); ++k) {
      if (opt_.order[at(k)] == MeshStep::reduce) ++n;
    }
    return n;
  }

  // The window: the recv of the n-th received chunk of a ring waits for the
  // free of its (n - w)-th; that chunk's blocks are emitted first if needed.
  int window_free(RingTimes& rt, int pos, int step, int window, bool is_q) {
    if (window == 0 || step < window) return -1;
    const int victim = (is_q ? qr_ : kvr_).arrival(pos, step - window);
    if (rt.arrive[at(victim)] == never) return -1;  // never received: holds no memory
    if (rt.freed[at(victim)] < 0) {
      for (int other = 0; other < (is_q ? tile_.b : tile_.a); ++other) {
        const int j = is_q ? victim : other, k = is_q ? other : victim;
        if (!emitted_[at(j * tile_.b + k)]) compute(j, k);
      }
      const int chunk = is_q ? tile_.q_chunk(g_, victim) : tile_.kv_chunk(g_, victim);
      rt.freed[at(victim)] = build_.free(is_q ? objs_.q[at(chunk)] : objs_.kv[at(chunk)]);
    }
    return rt.freed[at(victim)];
  }

  // Gather step s: what mesh_relay.hpp moves (ring hop s+1, or the shift of a direct step).
  void comm_q(int comm_group, int s) {
    const MeshTransfer out = qr_.gather_send(p_, s), in = qr_.gather_recv(p_, s);
    const int wait = in.item >= 0 ? window_free(q_, p_, s, opt_.windows.q, true) : -1;
    if (out.item >= 0) {
      build_.send(objs_.q[at(tile_.q_chunk(g_, out.item))], q_rank(out.peer), comm_group);
    }
    if (in.item < 0) return;
    std::vector<int> after;
    if (wait >= 0) after.push_back(wait);
    build_.recv(objs_.q[at(tile_.q_chunk(g_, in.item))], q_rank(in.peer), comm_group, after);
  }

  void comm_kv(int comm_group, int s) {
    const MeshTransfer out = kvr_.gather_send(t_, s), in = kvr_.gather_recv(t_, s);
    const int wait = in.item >= 0 ? window_free(kv_, t_, s, opt_.windows.kv, false) : -1;
    const auto kv_rank = [&](int pos) { return pos * tile_.a + tile_.q_pos(g_); };
    if (out.item >= 0) {
      build_.send(objs_.kv[at(tile_.kv_chunk(g_, out.item))], kv_rank(out.peer), comm_group);
    }
    if (in.item < 0) return;
    std::vector<int> after;
    if (wait >= 0) after.push_back(wait);
    build_.recv(objs_.kv[at(tile_.kv_chunk(g_, in.item))], kv_rank(in.peer), comm_group, after);
  }

  // Reduce step s: a ring member without work on the item forwards the partial it received
  // (the carrier's object); a direct step sends this rank's own partial home.
  void comm_r(int comm_group, int s) {
    const MeshTransfer out = qr_.reduce_send(p_, s), in = qr_.reduce_recv(p_, s);
    if (out.item >= 0) {
      const int sent[] = {partial(q_rank(out.carrier), out.item),
                          partial_lse(q_rank(out.carrier), out.item)};
      for (int obj : sent) {
        build_.send(obj, q_rank(out.peer), comm_group);
        sent_partials_.push_back(obj);
      }
    }
    if (in.item >= 0) {
      build_.recv(partial(q_rank(in.carrier), in.item), q_rank(in.peer), comm_group);
      build_.recv(partial_lse(q_rank(in.carrier), in.item), q_rank(in.peer), comm_group);
    }
    received_ = in;
  }

  // Folds the partial the previous reduce step received: into O, LSE when it is of this
  // rank's own Q chunk, into its own partial when it has work on that chunk and forwards the
  // sum next (a ring), not at all when it only forwards it.
  void merge_received() {
    const MeshTransfer in = received_;
    received_ = MeshTransfer{};
    if (in.item < 0) return;
    const bool own = in.item == p_;
    if (!own && !qr_.needs(p_, in.item)) return;
    const int partials[] = {partial(q_rank(in.carrier), in.item),
                            partial_lse(q_rank(in.carrier), in.item)};
    const int targets[] = {own ? objs_.o[at(g_)] : partial(g_, in.item),
                           own ? objs_.lse[at(g_)] : partial_lse(g_, in.item)};
    build_.merge(partials, targets);
    build_.free(partials[0]);
    build_.free(partials[1]);
  }

  void emit_frees(int comm_group) {
    const bool final_phase = comm_group == static_cast<int>(opt_.order.size());
    auto sweep = [&](RingTimes& rt, int size, int pos, bool is_q) {
      for (int x = 0; x < size; ++x) {
        if (x == pos || rt.freed[at(x)] >= 0 || rt.arrive[at(x)] >= comm_group) continue;
        if ((is_q ? left_q_[at(x)] : left_kv_[at(x)]) > 0) continue;
        if (rt.forward[at(x)] > comm_group && !final_phase) continue;
        const int chunk = is_q ? tile_.q_chunk(g_, x) : tile_.kv_chunk(g_, x);
        rt.freed[at(x)] = build_.free(is_q ? objs_.q[at(chunk)] : objs_.kv[at(chunk)]);
      }
    };
    sweep(q_, tile_.a, p_, true);
    sweep(kv_, tile_.b, t_, false);
    for (int obj : sent_partials_) build_.free(obj);
    sent_partials_.clear();
  }

  Plan& plan_;
  FusingBuilder build_;
  const ChunkObjects& objs_;
  const std::vector<int>& po_;
  const std::vector<int>& pl_;
  const MeshOptions& opt_;
  MeshTile tile_;
  int g_, p_, t_;
  const MeshRelay& qr_;
  const MeshRelay& kvr_;
  RingTimes q_, kv_;
  int last_kv_group_ = -1;  // comm group of the last KV arrival (-1: b = 1)
  std::vector<std::uint8_t> emitted_;
  std::vector<int> kv_order_;  // KV positions in arrival order (own first)
  std::vector<int> cursor_;    // per Q position: kv_order_ prefix already emitted
  std::vector<int> left_q_, left_kv_;
  std::vector<int> sent_partials_;  // objects sent this group, freed after it
  MeshTransfer received_;           // the partial the last reduce step received
};

// Partial dQ and dKV objects of the backward pass, one per (rank, tile position)
// that is not the rank's own (its own chunk accumulates into dQ[g] / dKV[g]).
struct MeshPartials {
  std::vector<int> dq;   // rank * a + Q position
  std::vector<int> dkv;  // rank * b + KV position
};

// Builds one rank's backward program (mesh_schedule.hpp): gather, compute, reduce.
class BackwardBuilder {
 public:
  BackwardBuilder(Plan& plan, FusingScratch& scratch, const AttentionObjects& objs,
                  const MeshPartials& partials, const MeshRelays& relays, MeshTile tile, int rank,
                  int first_group, bool fuse_blocks)
      : plan_(plan),
        build_(plan, scratch, rank, fuse_blocks),
        objs_(objs),
        partials_(partials),
        tile_(tile),
        g_(rank),
        p_(tile.q_pos(rank)),
        t_(tile.kv_pos(rank)),
        qr_(relays.q[at(tile.kv_pos(rank))]),
        kvr_(relays.kv[at(tile.q_pos(rank))]),
        group_(first_group) {
    const int a = tile_.a, b = tile_.b;
    q_in_.assign(at(a), 0);
    kv_in_.assign(at(b), 0);
    emitted_.assign(at(a * b), 0);
    q_freed_.assign(at(a), 0);
    kv_freed_.assign(at(b), 0);
    q_left_.assign(at(a), b);
    kv_left_.assign(at(b), a);
    q_new_.assign(at(a), 0);
    for (int s = 0; s < a; ++s) q_order_.push_back(s < a - 1 ? qr_.arrival(p_, s) : p_);
    kv_index_.assign(at(b), 0);
    for (int i = 0; i < b; ++i) {
      kv_order_.push_back(i < b - 1 ? kvr_.arrival(t_, i) : t_);
      kv_index_[at(kv_order_.back())] = i;
    }
    arrive_q(p_);
    arrive_kv(t_);
    // Empty pairs count as done, so a chunk whose other side never arrives is still freed.
    for (int j = 0; j < a; ++j) {
      for (int k = 0; k < b; ++k) {
        if (plan_.unmasked_pairs(tile_.q_chunk(g_, j), tile_.kv_chunk(g_, k)) <= 0) mark(j, k);
      }
    }
  }

  void run() {
    const int a = tile_.a, b = tile_.b;
    emit_ready();
    for (int s = 0; s < std::max(a, b) - 1; ++s, ++group_) {
      if (s < a - 1) gather_q(s);
      if (s < b - 1) gather_kv(s);
      emit_ready();
      free_used_up(s);
    }
    free_used_up(-1);
    // What the previous reduce step received on each ring (mesh_relay.hpp).
    MeshTransfer q_in, kv_in;
    for (int s = 0; s < std::max(a, b) - 1; ++s, ++group_) {
      // Before step s: fold what step s-1 received into the own partial it is forwarded with
      // (a ring), or into dQ[g] / dKV[g] (a direct step brings the rank's own chunk's).
      if (s < a - 1) fold_dq(q_in);
      if (s < b - 1) fold_dkv(kv_in);
      std::vector<int> sent;
      if (s < a - 1) {
        const MeshTransfer out = qr_.reduce_send(p_, s), in = qr_.reduce_recv(p_, s);
        if (out.item >= 0) {
          const int obj = dq(q_rank(out.carrier), out.item);
          build_.send(obj, q_rank(out.peer), group_);
          sent.push_back(obj);
        }
        if (in.item >= 0) build_.recv(dq(q_rank(in.carrier), in.item), q_rank(in.peer), group_);
        q_in = in;
      }
      if (s < b - 1) {
        const MeshTransfer out = kvr_.reduce_send(t_, s), in = kvr_.reduce_recv(t_, s);
        if (out.item >= 0) {
          const int obj = dkv(kv_rank(out.carrier), out.item);
          build_.send(obj, kv_rank(out.peer), group_);
          sent.push_back(obj);
        }
        if (in.item >= 0) {
          build_.recv(dkv(kv_rank(in.carrier), in.item), kv_rank(in.peer), group_);
        }
        kv_in = in;
      }
      for (int obj : sent) build_.free(obj);
    }
    fold_dq(q_in);
    fold_dkv(kv_in);
    build_.flush();
  }

 private:
  int dq(int rank, int u) const {
    return u == tile_.q_pos(rank) ? objs_.dq[at(rank)]
                                  : made(partials_.dq[at(rank * tile_.a + u)], rank, u);
  }
  int dkv(int rank, int v) const {
    return v == tile_.kv_pos(rank) ? objs_.dkv[at(rank)]
                                   : made(partials_.dkv[at(rank * tile_.b + v)], rank, v);
  }
  static int made(int partial, int rank, int position) {
    if (partial < 0) {
      throw std::logic_error(fmt::format(
          "mesh backward: rank {}'s partial at position {} was not made", rank, position));
    }
    return partial;
  }
  int q_rank(int pos) const { return tile_.kv_pos(g_) * tile_.a + pos; }
  int kv_rank(int pos) const { return pos * tile_.a + tile_.q_pos(g_); }

  // A received partial: summed into dQ[g] when it is of the own chunk, into the own partial
  // when this rank has work on that chunk, left alone when the rank only forwards it.
  void fold_dq(MeshTransfer& in) {
    if (in.item >= 0 && (in.item == p_ || qr_.needs(p_, in.item))) {
      merge(dq(q_rank(in.carrier), in.item), dq(g_, in.item));
    }
    in = MeshTransfer{};
  }
  void fold_dkv(MeshTransfer& in) {
    if (in.item >= 0 && (in.item == t_ || kvr_.needs(t_, in.item))) {
      merge(dkv(kv_rank(in.carrier), in.item), dkv(g_, in.item));
    }
    in = MeshTransfer{};
  }

  // The Q side of a Q chunk: what a backward block reads besides KV.
  std::vector<int> q_side(int chunk) const {
    return {objs_.q[at(chunk)], objs_.d_o[at(chunk)], objs_.o[at(chunk)], objs_.lse[at(chunk)]};
  }

  // Gather step s of each ring: what mesh_relay.hpp moves (ring hop s+1, or a direct shift).
  void gather_q(int s) {
    const MeshTransfer out = qr_.gather_send(p_, s), in = qr_.gather_recv(p_, s);
    if (out.item >= 0) {
      for (int obj : q_side(tile_.q_chunk(g_, out.item)))
        build_.send(obj, q_rank(out.peer), group_);
    }
    if (in.item >= 0) {
      for (int obj : q_side(tile_.q_chunk(g_, in.item))) build_.recv(obj, q_rank(in.peer), group_);
      arrive_q(in.item);
    }
  }

  void gather_kv(int s) {
    const MeshTransfer out = kvr_.gather_send(t_, s), in = kvr_.gather_recv(t_, s);
    if (out.item >= 0) {
      build_.send(objs_.kv[at(tile_.kv_chunk(g_, out.item))], kv_rank(out.peer), group_);
    }
    if (in.item >= 0) {
      build_.recv(objs_.kv[at(tile_.kv_chunk(g_, in.item))], kv_rank(in.peer), group_);
      arrive_kv(in.item);
    }
  }

  void arrive_q(int j) {
    q_in_[at(j)] = 1;
    q_new_[at(j)] = 1;
  }
  void arrive_kv(int k) {
    kv_in_[at(k)] = 1;
    new_kv_.push_back(k);
  }

  // Every block whose inputs are present, Q positions in the order their partial
  // dQ leaves on the reduce ring (arrival order, own last), KV positions likewise.
  // Every ready block was emitted by the previous call, so only the rows and columns of
  // the chunks that arrived since can hold new ones: a new Q position's whole row, and
  // the new KV positions (in their order) of every other row. O(a + b) a step, not O(a b).
  void emit_ready() {
    std::sort(new_kv_.begin(), new_kv_.end(),
              [&](int x, int y) { return kv_index_[at(x)] < kv_index_[at(y)]; });
    for (int j : q_order_) {
      if (!q_in_[at(j)]) continue;
      if (q_new_[at(j)]) {
        for (int k : kv_order_) {
          if (kv_in_[at(k)] && !emitted_[at(j * tile_.b + k)]) compute(j, k);
        }
        q_new_[at(j)] = 0;
      } else {
        for (int k : new_kv_) {
          if (!emitted_[at(j * tile_.b + k)]) compute(j, k);
        }
      }
    }
    new_kv_.clear();
  }

  void mark(int j, int k) {
    emitted_[at(j * tile_.b + k)] = 1;
    --q_left_[at(j)];
    --kv_left_[at(k)];
  }

  void compute(int j, int k) {
    mark(j, k);
    const int qc = tile_.q_chunk(g_, j), kc = tile_.kv_chunk(g_, k);
    if (plan_.unmasked_pairs(qc, kc) <= 0) return;
    const int reads[] = {objs_.q[at(qc)], objs_.kv[at(kc)], objs_.d_o[at(qc)], objs_.o[at(qc)],
                         objs_.lse[at(qc)]};
    const int writes[] = {dq(g_, j), dkv(g_, k)};
    build_.compute({qc, kc}, Pass::bwd, reads, writes);
  }

  // After gather step `step` (-1: after the gather): frees every received chunk
  // whose blocks are all emitted and that is forwarded already or never will be.
  // On a ring the position received at step s of n is forwarded at step s+1 < n-1; a direct
  // step's chunk is never forwarded.
  void free_used_up(int step) {
    for (int s = 0; s < tile_.a - 1; ++s) {
      const int j = q_order_[at(s)];
      if (!q_in_[at(j)] || q_freed_[at(j)] || !releasable(qr_, s, step, tile_.a)) continue;
      if (q_left_[at(j)] > 0) continue;
      for (int obj : q_side(tile_.q_chunk(g_, j))) build_.free(obj);
      q_freed_[at(j)] = 1;
    }
    for (int s = 0; s < tile_.b - 1; ++s) {
      const int k = kv_order_[at(s)];
      if (!kv_in_[at(k)] || kv_freed_[at(k)] || !releasable(kvr_, s, step, tile_.b)) continue;
      if (kv_left_[at(k)] > 0) continue;
      build_.free(objs_.kv[at(tile_.kv_chunk(g_, k))]);
      kv_freed_[at(k)] = 1;
    }
  }

  // Whether the chunk received at step `arrived` of a ring of `size` has arrived
  // and is no longer needed for forwarding after gather step `step`.
  static bool releasable(const MeshRelay& relay, int arrived, int step, int size) {
    if (step < 0) return true;
    if (relay.direct()) return arrived <= step;
    return arrived <= step && (arrived + 1 <= step || arrived + 1 == size - 1);
  }

  void merge(int received, int target) {
    const int partials[] = {received};
    const int targets[] = {target};
    build_.merge(partials, targets);
    build_.free(received);
  }

  Plan& plan_;
  FusingBuilder build_;
  const AttentionObjects& objs_;
  const MeshPartials& partials_;
  MeshTile tile_;
  int g_, p_, t_;
  const MeshRelay& qr_;
  const MeshRelay& kvr_;
  int group_;
  std::vector<std::uint8_t> q_in_, kv_in_, emitted_, q_freed_, kv_freed_;
  std::vector<int> q_left_, kv_left_;    // blocks of a Q row / KV column not yet emitted
  std::vector<int> q_order_, kv_order_;  // positions in arrival order, own last
  std::vector<int> kv_index_;            // KV position -> its index in kv_order_
  std::vector<std::uint8_t> q_new_;      // Q positions arrived since the last emit_ready
  std::vector<int> new_kv_;              // KV positions arrived since the last emit_ready
};

// The plan of ranks 0..emit_ranks-1 (all of them: the mesh plan; fewer: the quotient plan,
// whose peers are still the full tile's ranks), the programs of ranks first_rank.. relabelled
// r -> r - first_rank (chunk contents moved: rotate_chunk_contents by whole Q-groups, or whole
// columns where ranks are numbered by column). Programs are built at their tile positions and
// then numbered as options.ranks_by_column says (relabel_ranks; the rule: mesh_placement.hpp).
Plan build_mesh_plan(const AttentionShape& shape, const MeshOptions& options, int emit_ranks,
                     int first_rank = 0) {
  const MeshTile tile = options.tile;
  if (tile.a < 1 || tile.b < 1) {
    throw ScheduleError("schedule.tile", "expected a mesh tile [a, b] with a, b >= 1");
  }
  Plan plan = make_mesh_layout(shape, tile.ranks());
  const bool by_column = options.ranks_by_column && !options.fold;
  std::vector<int> rank_of(at(tile.ranks()));  // position -> the plan's rank
  if (options.fold) {
    if (first_rank != 0) throw std::invalid_argument("a mesh fold quotient has no work block");
    rank_of = mesh_fold_ranks(tile, *options.fold);
  } else {
    for (int g = 0; g < tile.ranks(); ++g) rank_of[at(g)] = by_column ? tile.column_rank(g) : g;
  }
  std::vector<char> emit(at(tile.ranks()), 0);
  for (int g = 0; g < tile.ranks(); ++g) emit[at(g)] = rank_of[at(g)] < emit_ranks ? 1 : 0;
  if (by_column && first_rank > 0) {
    // Representative (tr, tc) runs rank (tr, tc + m)'s program: every chunk takes the tokens of
    // the one m places on in its Q-group (its row of chunks), which maps the tile's Q chunks
    // onto themselves and its KV chunks onto column tc + m's.
    const int m = first_rank / tile.b;
    std::vector<int> source(at(tile.ranks()));
    for (int c = 0; c < tile.ranks(); ++c) {
      source[at(c)] = tile.kv_pos(c) * tile.a + (tile.q_pos(c) + m) % tile.a;
    }
    permute_chunk_contents(plan, source);
  } else {
    rotate_chunk_contents(plan, first_rank);
  }
  plan.tile_a = tile.a;
  plan.tile_b = tile.b;
  MeshOptions opt = options;
  const std::int64_t c = shape.seq_len / tile.ranks();
  if (opt.order.empty()) {
    try {
      opt.order =
          greedy_mesh_order(tile.a, tile.b, shape.q_bytes(c), shape.kv_bytes(c), opt.windows);
    } catch (const std::invalid_argument& e) {
      throw ScheduleError("schedule.memory_budget", e.what());
    }
  } else if (!mesh_order_allowed(tile.a, tile.b, opt.order, opt.windows)) {
    throw ScheduleError("schedule.tile", fmt::format("step order {} is not allowed for mesh {}x{}",
                                                     to_string(opt.order), tile.a, tile.b));
  }
  // Forward-only plans keep their object list (Q, KV, O, LSE per chunk) as it was.
  AttentionObjects all;
  if (shape.has_backward()) {
    all = add_attention_objects(plan);
  } else {
    const ChunkObjects fwd = add_forward_objects(plan);
    all.q = fwd.q;
    all.kv = fwd.kv;
    all.o = fwd.o;
    all.lse = fwd.lse;
  }
  const ChunkObjects objs{all.q, all.kv, all.o, all.lse};
  const int ranks = tile.ranks();
  const MeshRelays relays = mesh_relays(plan, tile);
  FusingScratch scratch;
  if (shape.has_forward()) {
    std::vector<int> partial_o(at(ranks * tile.a), -1), partial_lse(at(ranks * tile.a), -1);
    // The partials the emitted programs name: their own and those their Q-ring predecessors
    // send on (the carrier, mesh_relay.hpp; the same Q-group where ranks are positions).
    std::vector<char> named(at(ranks), 0);
    for (int g = 0; g < ranks; ++g) {
      if (emit[at(g)]) named[at(g)] = named[at(tile.q_prev(g))] = 1;
    }
    for (int g = 0; g < ranks; ++g) {
      if (!named[at(g)]) continue;
      for (int u = 0; u < tile.a; ++u) {
        if (u == tile.q_pos(g)) continue;
        const int chunk = tile.q_chunk(g, u);
        partial_o[at(g * tile.a + u)] =
            plan.add_object({Tensor::o, chunk, g, shape.o_accumulator_bytes(c), false, false,
                             fmt::format("O[{}]@{}", chunk, rank_of[at(g)])});
        partial_lse[at(g * tile.a + u)] =
            plan.add_object({Tensor::lse, chunk, g, shape.lse_bytes(c), false, false,
                             fmt::format("LSE[{}]@{}", chunk, rank_of[at(g)])});
      }
    }
    for (int g = 0; g < ranks; ++g) {
      if (emit[at(g)])
        RankBuilder(plan, scratch, objs, partial_o, partial_lse, opt, relays, g).run();
    }
  }
  if (shape.has_backward()) {
    MeshPartials partials;
    partials.dq.assign(at(ranks * tile.a), -1);
    partials.dkv.assign(at(ranks * tile.b), -1);
    // The partials the emitted programs name: their own, and those their ring predecessors
    // send on (under the full mask, the only one with a quotient, the reduce rings relay and
    // a hop's carrier is the previous member, mesh_relay.hpp; a masked ring's carrier can be
    // further back, and made() throws should a quotient ever name one): K + a ranks' for K
    // classes, not P's (a 1 x 4096 tile: 16.8M objects, 4.3 GB).
    std::vector<char> named(at(ranks), 0);
    for (int g = 0; g < ranks; ++g) {
      if (!emit[at(g)]) continue;
      named[at(g)] = 1;
      named[at(tile.q_prev(g))] = 1;
      named[at(tile.kv_prev(g))] = 1;
    }
    for (int g = 0; g < ranks; ++g) {
      if (!named[at(g)]) continue;
      for (int u = 0; u < tile.a; ++u) {
        if (u == tile.q_pos(g)) continue;
        const int chunk = tile.q_chunk(g, u);
        partials.dq[at(g * tile.a + u)] =
            plan.add_object({Tensor::dq, chunk, g, shape.dq_accumulator_bytes(c), false, false,
                             fmt::format("dQ[{}]@{}", chunk, rank_of[at(g)])});
      }
      for (int v = 0; v < tile.b; ++v) {
        if (v == tile.kv_pos(g)) continue;
        const int chunk = tile.kv_chunk(g, v);
        partials.dkv[at(g * tile.b + v)] =
            plan.add_object({Tensor::dkv, chunk, g, shape.dkv_accumulator_bytes(c), false, false,
                             fmt::format("dKV[{}]@{}", chunk, rank_of[at(g)])});
      }
    }
    // Every rank's forward uses the same number of comm groups, so the backward's
    // groups start at the same index everywhere.
    const int first_group = shape.has_forward() ? static_cast<int>(opt.order.size()) : 0;
    for (int g = 0; g < ranks; ++g) {
      if (!emit[at(g)]) continue;
      BackwardBuilder(plan, scratch, all, partials, relays, tile, g, first_group, opt.fuse_blocks)
          .run();
    }
  }
  if (by_column || options.fold) relabel_ranks(plan, rank_of);
  return plan;
}

}  // namespace

Plan make_mesh_plan(const AttentionShape& shape, const MeshOptions& options) {
  return build_mesh_plan(shape, options, options.tile.ranks());
}

Plan make_mesh_classes_plan(const AttentionShape& shape, const MeshOptions& options, int classes,
                            int first_rank) {
  const MeshTile tile = options.tile;
  // The shift its programs are equivariant under: whole Q-groups, or whole KV-groups where
  // ranks are numbered by column (mesh_placement.hpp).
  const int step = tile.rank_shift(options.ranks_by_column);
  if (classes < 1 || tile.ranks() % classes != 0 || classes % step != 0 || first_rank < 0 ||
      first_rank >= tile.ranks() || first_rank % step != 0) {
    throw std::invalid_argument(fmt::format(
        "a mesh quotient plan takes classes a multiple of {} = {} dividing {}, and a first rank "
        "a multiple of it",
        options.ranks_by_column ? "b" : "a", step, tile.ranks()));
  }
  Plan plan = build_mesh_plan(shape, options, classes, first_rank);
  fold_onto_classes(plan, classes);
  return plan;
}

double mesh_forward_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile) {
  const std::int64_t c = shape.seq_len / tile.ranks();
  return (tile.a - 1) * shape.q_bytes(c) + (tile.b - 1) * shape.kv_bytes(c) +
         (tile.a - 1) * (shape.o_accumulator_bytes(c) + shape.lse_bytes(c));
}

double mesh_backward_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile) {
  const std::int64_t c = shape.seq_len / tile.ranks();
  const double q_side = shape.q_bytes(c) + shape.d_o_bytes(c) + shape.o_accumulator_bytes(c) +
                        shape.dq_accumulator_bytes(c) + shape.lse_bytes(c);
  return (tile.a - 1) * q_side +
         (tile.b - 1) * (shape.kv_bytes(c) + shape.dkv_accumulator_bytes(c));
}

double mesh_bytes_in_per_rank(const AttentionShape& shape, MeshTile tile) {
  double bytes = 0.0;
  if (shape.has_forward()) bytes += mesh_forward_bytes_in_per_rank(shape, tile);
  if (shape.has_backward()) bytes += mesh_backward_bytes_in_per_rank(shape, tile);
  return bytes;
}

namespace {

// Under a mask that may empty chunk pairs: the busiest rank's received bytes by the direct
// rule of mesh_relay.hpp (one chunk per other group member it reads, one partial per other
// member that reads its chunk), over the passes of shape.pass.
double masked_mesh_bytes_max(const AttentionShape& shape, MeshTile tile) {
  const Plan plan = make_mesh_layout(shape, tile.ranks());
  const MeshRelays relays = mesh_relays(plan, tile);
  const std::int64_t c = shape.seq_len / tile.ranks();
  const double q = shape.q_bytes(c), kv = shape.kv_bytes(c), o = shape.o_accumulator_bytes(c);
  const double lse = shape.lse_bytes(c), d_o = shape.d_o_bytes(c);
  const double dq = shape.dq_accumulator_bytes(c), dkv = shape.dkv_accumulator_bytes(c);
  double most = 0.0;
  for (int g = 0; g < tile.ranks(); ++g) {
    const int p = tile.q_pos(g), t = tile.kv_pos(g);
    const MeshRelay& qr = relays.q[at(t)];
    const MeshRelay& kvr = relays.kv[at(p)];
    int q_in = 0, partials = 0, kv_in = 0, dkv_home = 0;
    for (int x = 0; x < tile.a; ++x) {
      if (x == p) continue;
      q_in += qr.needs(p, x);
      partials += qr.needs(x, p);
    }
    for (int x = 0; x < tile.b; ++x) {
      if (x == t) continue;
      kv_in += kvr.needs(t, x);
      dkv_home += kvr.needs(x, t);
    }
    double bytes = 0.0;
    if (shape.has_forward()) bytes += q_in * q + partials * (o + lse) + kv_in * kv;
    if (shape.has_backward()) {
      bytes += q_in * (q + d_o + o + lse) + partials * dq + kv_in * kv + dkv_home * dkv;
    }
    most = std::max(most, bytes);
  }
  return most;
}

}  // namespace

MeshTile fewest_bytes_tile(const AttentionShape& shape, int ranks) {
  // Full and causal masks: the closed forms; under a window or documents what the direct
  // sends move at the busiest rank.
  const bool masked = shape.mask.kind == AttentionMaskKind::sliding_window ||
                      shape.mask.kind == AttentionMaskKind::documents;
  const auto bytes = [&](MeshTile t) {
    return masked ? masked_mesh_bytes_max(shape, t) : mesh_bytes_in_per_rank(shape, t);
  };
  MeshTile best{1, ranks};
  double best_bytes = bytes(best);
  for (const MeshTile& t : mesh_tiles(ranks)) {
    const double b = bytes(t);
    if (b < best_bytes) {
      best = t;
      best_bytes = b;
    }
  }
  return best;
}

Plan make_mesh_plan(const AttentionShape& shape, const ScheduleSpec& spec) {
  if (spec.tile_choice != MeshTileChoice::given) {
    throw std::logic_error("mesh tile choice not resolved: prepare_scenario resolves it");
  }
  const MeshTile tile{spec.tile_a, spec.tile_b};
  if (tile.a < 1 || tile.b < 1 || tile.ranks() != spec.gpus) {
    throw ScheduleError("schedule.tile", fmt::format("tile [{}, {}] has {} ranks, but gpus is {}",
                                                     tile.a, tile.b, tile.a * tile.b, spec.gpus));
  }
  MeshOptions opt;
  opt.tile = tile;
  opt.windows = mesh_windows_for_budget(shape, tile, spec.memory_budget_bytes);
  MeshNumbering numbering = mesh_numbering(tile, spec.placement, spec.gpus_per_node);
  opt.ranks_by_column = numbering.by_column;
  Plan plan = make_mesh_plan(shape, opt);
  plan.placement = std::move(numbering.placement);
  return plan;
}

Plan make_mesh_classes_plan(const AttentionShape& shape, const ScheduleSpec& spec, int classes,
                            int first_rank) {
  const MeshTile tile{spec.tile_a, spec.tile_b};
  MeshOptions opt;
  opt.tile = tile;
  opt.windows = mesh_windows_for_budget(shape, tile, spec.memory_budget_bytes);
  opt.ranks_by_column = mesh_ranks_by_column(tile, spec.placement, spec.gpus_per_node);
  return make_mesh_classes_plan(shape, opt, classes, first_rank);
}

Plan make_mesh_fold_plan(const AttentionShape& shape, const ScheduleSpec& spec, MeshFold fold) {
  const MeshTile tile{spec.tile_a, spec.tile_b};
  if (fold.x < 1 || fold.y < 1 || tile.b % fold.x != 0 || tile.a % fold.y != 0 ||
      fold.classes() >= tile.ranks()) {
    throw std::invalid_argument(
        fmt::format("a mesh fold takes x dividing b = {} and y dividing a = {}, x y below {}",
                    tile.b, tile.a, tile.ranks()));
  }
  MeshOptions opt;
  opt.tile = tile;
  opt.windows = mesh_windows_for_budget(shape, tile, spec.memory_budget_bytes);
  opt.fold = fold;
  Plan plan = build_mesh_plan(shape, opt, fold.classes());
  fold_onto_classes(plan, fold.classes());
  return plan;
}

}  // namespace tilesim
