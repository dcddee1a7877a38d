// The tracker of plan_tracker.hpp over programs that are generated while they run, so that
// a simulation holds O(ranks x window) ops instead of the whole plan (issue 13, item 1).
//
// A ProgramSource owns a plan whose programs grow: extend(rank) appends the next piece of
// that rank's program (a ring step). The tracker keeps every rank's program at least
// `lookahead_ops` past its first unfinished op, derives each new op's prerequisites,
// allocations and comm group as plan_semantics.hpp does for a whole program (folded compute
// stream), matches the k-th send a->b with the k-th recv b<-a as they appear, and drops the
// ops a rank has finished from its program and from its own state.
//
// Same hand-outs in the same order as PlanTracker over the whole plan. A prerequisite that has
// finished before its successor was derived is left out of the successor's count, which is
// what PlanTracker's count holds by then; so every op becomes ready at the same completion and
// in the same successor order (ascending) as there, provided that no compute, merge or free is
// derived with all its prerequisites finished (PlanTracker readied it at the last one's
// completion; a send or receive is readied when derived: its readiness only counts toward its
// comm group, which is not posted before its predecessor completes) and that a comm group
// exists when its predecessor completes. Both are checked: std::logic_error names
// the rank (the source's pieces or the lookahead are too short), never a silent difference.
// Ops ready from the start must lie in the first pieces (the constructor readies them in rank
// and op order, as PlanTracker does).
// Not checked here, unlike PlanTracker and the validator: comm groups forming one run, send and
// recv objects beyond equal bytes; the generators that feed it pass both at small P
// (tests/test_windowed_tracker.cpp compares whole simulations).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/plan/plan.hpp"
#include "sim/plan/plan_semantics.hpp"
#include "sim/plan/plan_tracker.hpp"

namespace tilesim {

// The lookahead the simulator runs a source with by default (simulate_windowed,
// simulate_classes_windowed): some ring steps of the ring family's pieces.
inline constexpr int kWindowLookaheadOps = 64;

class ProgramSource {
 public:
  virtual ~ProgramSource() = default;
  // The plan: chunks and objects whole; programs of plan().ranks ranks, growing.
  virtual Plan& plan() = 0;
  // Appends the next piece of `rank`'s program; false (appending nothing) once it is complete.
  virtual bool extend(int rank) = 0;
  // The ops of `rank` before `index` have finished and will not be read again.
  virtual void discard_before(int rank, int index) = 0;
  // plan_digest of the whole plan the pieces make, once every program is complete.
  virtual std::string whole_plan_digest() const = 0;
  // The lookahead the tracker needs over these pieces: a rank's next comm group must be
  // generated before its current one completes, so at least the ops of the pieces that may lie
  // between its first unfinished op and that group (the tracker throws where it is short).
  virtual int lookahead_ops() const { return kWindowLookaheadOps; }
};

class WindowedTracker {
 public:
  // peer_ranks > 0: the plan is an offset quotient of that many ranks (class_plan.hpp
  // keep_class_programs), its sends and recvs naming full ranks, paired by offset.
  WindowedTracker(ProgramSource& source, int lookahead_ops, int peer_ranks = 0);

  void poll(std::vector<OpId>& compute_ready, std::vector<Transfer>& transfers_ready);
  void finish(OpId op) { complete(op); }
  void finish_transfer(const Transfer& transfer) {
    complete(transfer.send);
    complete(transfer.recv);
  }

  bool all_done() const;
  std::size_t done_ops() const { return done_ops_; }
  std::vector<OpId> first_blocked(std::size_t limit) const;
  double peak_bytes(int rank) const {
    return ranks_[static_cast<std::size_t>(rank)].memory.peak_bytes;
  }
  const TensorBytes& peak_breakdown(int rank) const {
    return ranks_[static_cast<std::size_t>(rank)].memory.peak_breakdown;
  }
  // Most ops any rank held at once (tests bound the window with it).
  std::size_t max_window_ops() const { return max_window_ops_; }

 private:
  enum class State : std::uint8_t { waiting, ready, posted, done };
  static constexpr std::int32_t kNone = -1;
  struct OpState {
    std::uint32_t pending = 0;
    std::int32_t succ_head = kNone;  // successor list: nodes in RankState::succ
    std::int32_t succ_tail = kNone;
    std::uint32_t mem_begin = 0;  // RankState::mem[mem_begin - mem_base, mem_end - mem_base)
    std::uint32_t mem_end = 0;
    std::int32_t group = -1;  // absolute comm group index, -1 for others
    OpId partner{-1, -1};
    State state = State::waiting;
  };
  struct SuccNode {
    std::int32_t op = 0;
    std::int32_t next = kNone;
  };
  struct Group {
    std::uint32_t pending = 0;
    std::uint32_t remaining = 0;
    std::uint32_t ops_begin = 0;  // RankState::group_ops[ops_begin - group_ops_base, ops_end - ...)
    std::uint32_t ops_end = 0;
  };
  struct Hazard : ObjectHazard {
    bool live = false;
  };
  struct Unmatched {
    std::vector<OpId> sends, recvs;  // FIFO; one of the two is empty
    std::size_t head = 0;
  };
  struct RankState {
    int base = 0;          // absolute index of op[0]
    int first_undone = 0;  // every op before it is done
    std::vector<OpState> op;
    std::vector<SuccNode> succ;
    std::int32_t succ_free = kNone;
    std::uint32_t mem_base = 0;  // absolute position of mem[0]
    std::vector<std::int32_t> mem;
    int group_base = 0;  // absolute index of groups[0]
    std::vector<Group> groups;
    std::uint32_t group_ops_base = 0;  // absolute position of group_ops[0]
    std::vector<std::int32_t> group_ops;
    int last_group_id = -1;     // Op::comm_group of the last group
    int piece_first_group = 0;  // first group index of the piece being derived
    bool complete = false;      // the source has no more pieces
    // Derivation state (plan_semantics.hpp, carried from piece to piece).
    int derived = 0;
    int last_compute = -1;
    // Per object the rank touched lately: a few for a ring (its own Q, O, LSE, partials, the
    // KV in flight), where a flat list searched from the back beats a hash map; USP's 4u
    // (every bundle of its group, held for the whole ring: 43% of a u = 32 run's time in the
    // search) get an index, object -> slot, past kHazardScanMax entries.
    std::vector<std::pair<int, Hazard>> hazards;
    std::unordered_map<int, std::size_t> hazard_index;  // empty while the list is short
    // Sends of this rank waiting for their recv, or recvs waiting for their send, per peer (per
    // offset in an offset quotient); an entry goes once nothing waits.
    std::vector<std::pair<int, Unmatched>> unmatched_to;
    MemoryLedger memory;
  };

  bool offset_quotient() const { return peer_ranks_ != plan_.ranks; }
  OpState& state(OpId id) {
    RankState& rs = ranks_[static_cast<std::size_t>(id.rank)];
    return rs.op[static_cast<std::size_t>(id.index - rs.base)];
  }
  bool is_done(const RankState& rs, int index) const {
    return index < rs.first_undone ||
           rs.op[static_cast<std::size_t>(index - rs.base)].state == State::done;
  }
  void keep_ahead(int rank);
  void derive_new(int rank);
  void derive_op(int rank, int index);
  std::size_t hazard_slot(int rank, int object);  // index in RankState::hazards, made if new
  static void index_hazards(RankState& rs);       // RankState::hazard_index, afresh
  void match(int rank, int index, const Op& op);
  void add_successor(RankState& rs, int prerequisite, int successor);
  void advance_front(int rank);
  void compact(int rank);
  void make_ready(OpId op);
  void post_group(int rank, int group);
  void complete(OpId op);
  void allocate(int rank, int object);
  void release(int rank, int object);
  void allocate_for(int rank, int op);

  ProgramSource& source_;
  Plan& plan_;
  int lookahead_ops_;
  int peer_ranks_;         // P of an offset quotient, else plan_.ranks
  bool started_ = false;   // the constructor's pieces are in
  bool quotient_ = false;  // objects of ranks it does not hold (plan_tracker.cpp's match_comm)
  std::vector<RankState> ranks_;
  std::vector<std::int32_t> preds_;
  std::vector<std::size_t> hazard_slots_;                    // the op's reads, then writes
  std::vector<ObjectHazard*> read_hazards_, write_hazards_;  // RankState::hazards entries
  std::vector<OpId> worklist_;
  std::size_t worklist_head_ = 0;
  std::vector<OpId> pending_compute_;
  std::vector<Transfer> pending_transfers_;
  std::size_t done_ops_ = 0;
  std::size_t total_ops_ = 0;
  std::size_t max_window_ops_ = 0;
};

}  // namespace tilesim
