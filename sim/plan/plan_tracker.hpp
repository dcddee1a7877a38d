// Executes the plan semantics of plan.hpp as a dependency state machine, with
// no notion of time: the caller (validator dry run, simulator) decides when the
// ops it is handed finish.
//
// The dependency structure comes from plan_semantics.hpp (folded form: each
// compute-stream op waits for the previous one, and only the latest
// compute-stream prerequisite is kept). Each op waits on a counter of
// unfinished prerequisites; comm ops are posted a group at a time: group g of a
// rank posts when group g-1 has completed and every op in g is ready. A matched
// send/recv pair becomes a Transfer once both sides are posted. Memory: inputs
// are live from the start, a recv allocates when posted, a compute or merge
// allocates when it starts, free releases (which op allocates or releases what
// is the derivation's). An offset quotient matches its sends and recvs by peer offset instead
// (match_comm_by_offset).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/plan_semantics.hpp"

namespace tilesim {

struct Transfer {
  OpId send;
  OpId recv;
  int object = -1;
};

inline constexpr int kTensorKinds = 8;
using TensorBytes = std::array<double, kTensorKinds>;  // indexed by Tensor

// One rank's memory as a tracker runs its program: the bytes live now, per tensor, and the
// most ever live with the breakdown at that moment (the first moment it was reached).
struct MemoryLedger {
  double live_bytes = 0.0;
  double peak_bytes = 0.0;
  TensorBytes live_by_tensor{};
  TensorBytes peak_breakdown{};

  void allocate(const DataObject& obj) {
    live_bytes += obj.bytes;
    live_by_tensor[static_cast<std::size_t>(obj.tensor)] += obj.bytes;
    if (live_bytes > peak_bytes) {
      peak_bytes = live_bytes;
      peak_breakdown = live_by_tensor;
    }
  }
  void release(const DataObject& obj) {
    live_bytes -= obj.bytes;
    live_by_tensor[static_cast<std::size_t>(obj.tensor)] -= obj.bytes;
  }
};

class PlanTracker {
 public:
  // Throws PlanError for unmatched or mismatched send/recv pairs and for comm
  // groups that are not consecutive in a rank's program. peer_ranks = P > plan.ranks: the plan
  // is an offset quotient (sim/schedules/class_plan.hpp keep_class_programs), the programs of
  // ranks 0..K-1 of a P-rank plan whose sends and recvs name full ranks as peers.
  explicit PlanTracker(const Plan& plan, int peer_ranks = 0);

  // Hands out everything that became possible: compute/merge ops to start, and
  // transfers whose two sides are posted. Free ops complete inside.
  void poll(std::vector<OpId>& compute_ready, std::vector<Transfer>& transfers_ready);
  void finish(OpId op);
  void finish_transfer(const Transfer& transfer);

  bool all_done() const { return done_ops_ == total_ops_; }
  std::size_t done_ops() const { return done_ops_; }
  std::size_t total_ops() const { return total_ops_; }
  bool is_done(OpId op) const;
  // The first unfinished op of each rank that has one (for deadlock reports).
  std::vector<OpId> first_blocked(std::size_t limit) const;

  // The order the tracker enforces, read back (tests compare it with the executor's): the
  // ops that wait for `op` to finish, and the index of op's comm group on its rank (-1 for
  // an op that is not a send or recv).
  std::span<const std::int32_t> successors(OpId op) const {
    const RankState& rs = ranks_[static_cast<std::size_t>(op.rank)];
    const auto i = static_cast<std::size_t>(op.index);
    return {rs.succ.data() + rs.op[i].succ_begin, rs.op[i + 1].succ_begin - rs.op[i].succ_begin};
  }
  int comm_group_index(OpId op) const {
    return ranks_[static_cast<std::size_t>(op.rank)].op[static_cast<std::size_t>(op.index)].group;
  }

  // The objects op allocates when it starts (a compute, merge or recv that
  // creates its rank's copy; for a free, the objects it releases). A compute
  // that allocates an accumulator starts it empty, even if an earlier copy was
  // freed.
  std::span<const std::int32_t> allocated_by(OpId op) const {
    const RankState& rs = ranks_[static_cast<std::size_t>(op.rank)];
    const auto i = static_cast<std::size_t>(op.index);
    return {rs.mem.data() + rs.op[i].mem_begin, rs.op[i + 1].mem_begin - rs.op[i].mem_begin};
  }

  double live_bytes(int rank) const {
    return ranks_[static_cast<std::size_t>(rank)].memory.live_bytes;
  }
  double peak_bytes(int rank) const {
    return ranks_[static_cast<std::size_t>(rank)].memory.peak_bytes;
  }
  // Live bytes per tensor kind at the moment of the rank's peak.
  const TensorBytes& peak_breakdown(int rank) const {
    return ranks_[static_cast<std::size_t>(rank)].memory.peak_breakdown;
  }

 private:
  enum class State : std::uint8_t { waiting, ready, posted, done };
  struct Group {
    std::uint32_t begin = 0;  // into RankState::comm_ops
    std::uint32_t end = 0;
    std::uint32_t pending = 0;
    std::uint32_t remaining = 0;
  };
  // Everything the hot path touches for one op, in one cache-friendly record.
  struct OpState {
    std::uint32_t pending = 0;     // unfinished prerequisites
    std::uint32_t succ_begin = 0;  // successors: succ[succ_begin, next op's succ_begin)
    std::uint32_t mem_begin = 0;   // objects it allocates (free: releases), same layout
    std::int32_t group = -1;       // comm group index on the rank, -1 for others
    State state = State::waiting;
  };
  struct RankState {
    std::vector<OpState> op;  // one per op plus a sentinel for succ and mem ranges
    std::vector<std::int32_t> succ;
    std::vector<std::int32_t> mem;
    std::vector<std::int32_t> comm_ops;
    std::vector<Group> groups;
    std::vector<OpId> partner;
    MemoryLedger memory;
  };

  void build_rank(SemanticsDeriver& deriver, RankSemantics& sem, int rank);
  void match_comm(int peer_ranks);
  // An offset quotient (peer_ranks = P > ranks = K; class_plan.hpp): the k-th send of
  // class s at peer offset t = (d - s) mod P matches the k-th recv at offset t (from peer
  // c - t) of class c = (s + t) mod K, the representative that plays d; c may be s itself.
  void match_comm_by_offset(int peer_ranks);
  void pair_up(OpId send, OpId recv);
  void make_ready(OpId op);
  void post_group(int rank, int group);
  void complete(OpId op);
  void allocate(int rank, int object);
  void release(int rank, int object);
  void allocate_for(int rank, int op);  // the objects op allocates (or, free, releases)

  const Plan* plan_;
  std::vector<std::uint32_t> fill_scratch_;  // per op, while building one rank
  std::vector<RankState> ranks_;
  std::vector<OpId> worklist_;
  std::size_t worklist_head_ = 0;
  std::vector<OpId> pending_compute_;
  std::vector<Transfer> pending_transfers_;
  std::size_t done_ops_ = 0;
  std::size_t total_ops_ = 0;
};

}  // namespace tilesim
