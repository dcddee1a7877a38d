// One rank's pass-Q program (pass_q_schedule.hpp has the schedule) generated one ring step at a
// time: make_pass_q_plan emits every step of every rank with it, and the windowed source
// (pass_q_source.hpp) one step when the tracker asks, so both give the same ops.
#pragma once

#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"

namespace tilesim {

// The partial output of chunk i computed away from its owner in step s: an O and an LSE object
// per chunk and step parity, which the rank computing Q[i] x KV[x] writes into its own copy,
// sends to the owner and frees (as a travelling KV has one object and a copy per rank it
// passes). The owner merges and frees step s's copy in step s + 1, while step s + 1's arrives
// into the other parity: two receive buffers, so no arrival waits for the previous merge. So
// the plan has 4P partial objects, not one per (chunk, computing rank) pair.
struct PassQPartial {
  int o = -1, lse = -1;
};
struct PassQPartials {
  std::vector<PassQPartial> by_parity[2];  // [s % 2][chunk]
  const PassQPartial& at(int chunk, int step) const {
    return by_parity[step % 2][static_cast<std::size_t>(chunk)];
  }
};

// The way Q travels and how far each chunk goes. Full and causal masks: every rank reads every
// chunk, so Q goes round towards r+1 (P-1 hops each, P steps). Under a window or documents a
// chunk goes only as far as its farthest reader along the direction that reaches every
// reader in fewer steps (readers of a causal-within mask over contiguous chunks are the ranks
// before the owner, so towards r-1).
struct QRoute {
  int direction = 1;      // Q goes from rank r to r + direction
  std::vector<int> hops;  // hops[i]: how far Q[i] travels
  int steps = 0;          // 1 + the largest hop count
  bool held_at_step(int chunk, int step) const {
    return step <= hops[static_cast<std::size_t>(chunk)];
  }
};

// The chunks of a pass-Q plan (zigzag ownership under a causal mask, contiguous else).
Plan pass_q_layout(const AttentionShape& shape, int ranks);
QRoute route_q(const Plan& plan);
// The partials of every chunk some other rank computes a block of.
PassQPartials add_pass_q_partials(Plan& plan);

// Rank `rank`'s program, one ring step per emit_step(). The plan, groups, objects, partials
// and route must outlive the member.
class PassQMember {
 public:
  PassQMember(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
              const PassQPartials& partials, const QRoute& route, int rank);
  bool done() const { return step_ >= route_->steps; }
  void emit_step();  // appends step s (the last one also merges the last partial)
  // The oldest op a later step's `after` may name (the last Q free, which a mask may leave
  // several steps back); INT_MAX when none.
  int oldest_awaited() const;

 private:
  int wrap(int x) const;
  void merge_pending();

  Plan* plan_;
  ProgramBuilder build_;
  CommGroups* groups_;
  const AttentionObjects* objs_;
  const PassQPartials* partials_;
  const QRoute* route_;
  int rank_;
  int step_ = 0;
  std::vector<int> last_free_;  // the last Q free, which the next Q receive waits for
  PassQPartial to_merge_;       // the partial of Q[rank] received in the last step
};

}  // namespace tilesim
