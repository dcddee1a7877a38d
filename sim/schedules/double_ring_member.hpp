// One rank's double-ring program generated one inner step at a time (double_ring_schedule.hpp
// has the schedule): make_double_ring_plan emits every step of every rank with it, and the lazy
// source (double_ring_source.hpp) one step when the windowed tracker asks, so both give the
// same ops.
#pragma once

#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/program_builder.hpp"
#include "sim/schedules/attention_objects.hpp"

namespace tilesim {

// How far each chunk's KV travels (double_ring_schedule.hpp, "Masks"): chunk x = M*k + j
// goes `spine` outer hops, (M, j) -> (M+1, j) -> ... (a relay through nodes between), and at
// node M+o from (M+o, j) `branch` inner hops (M+o, j+1), ...: each as far as its farthest
// reader. Full and causal masks: every chunk goes all the way (n-1 and k-1), and the tables
// are not built (O(P n) under a window or documents).
struct KvReach {
  int k = 1, n = 1;
  bool whole = true;             // every chunk goes all the way
  std::vector<int> spine;        // by chunk (empty when whole)
  std::vector<int> branch;       // chunk * n + o (empty when whole)
  std::vector<int> inner_steps;  // by outer step: 1 + the largest branch there
  int outer_steps = 1;           // 1 + the largest spine
  int spine_of(int chunk) const { return whole ? n - 1 : spine[static_cast<std::size_t>(chunk)]; }
  int branch_of(int chunk, int o) const {
    return whole ? k - 1 : branch[static_cast<std::size_t>(chunk * n + o)];
  }
  // Whether the rank at inner offset t from the spine of node M+o holds chunk x there.
  bool holds(int chunk, int o, int t) const {
    return spine_of(chunk) >= o && branch_of(chunk, o) >= t;
  }
};

// The chunk pairs decide the reach: plan.ranks ranks in inner rings of `inner`.
KvReach kv_reach(const Plan& plan, int inner);

// The chunks of a double-ring plan (zigzag ownership under a causal mask, contiguous else).
Plan double_ring_layout(const AttentionShape& shape, int ranks);

// ScheduleError at schedule.inner unless inner divides ranks.
void check_double_ring_inner(int ranks, int inner);

// Rank p = N*k + i is member i of node N.
struct RingSeat {
  int k, n;     // inner ring size, nodes
  int node, i;  // this rank is member i of node `node`
  int inner_next, inner_prev, outer_next, outer_prev;
  RingSeat(int rank, int inner, int nodes);
  int rank() const { return node * k + i; }
  // Node whose KV circulates here in outer step o, and the chunk computed in
  // its inner step t.
  int kv_node(int o) const { return (node - o + n) % n; }
  int chunk(int m, int t) const { return m * k + ((i - t) % k + k) % k; }
};

// Rank `rank`'s program: its forward's inner steps (when the shape has a forward), then its
// backward's; each step is the inner (and outer) transfers of that step, the call, and what
// follows it. The plan, groups, objects and reach must outlive the member.
class DoubleRingMember {
 public:
  DoubleRingMember(Plan& plan, CommGroups& groups, const AttentionObjects& objs,
                   const KvReach& reach, int rank);
  bool done() const { return phase_ == Phase::done; }
  void emit_step();  // appends the next step (not when done())
  // The oldest op of the program a later step's `after` may name (a free a receive waits for,
  // which a mask may leave several steps back); INT_MAX when none.
  int oldest_awaited() const;

 private:
  enum class Phase { forward, backward, done };
  void compute_forward(int cur, bool held);
  void compute_backward(int o, int t, int cur, bool held);
  void advance();

  Plan* plan_;
  ProgramBuilder build_;
  CommGroups* groups_;
  const AttentionObjects* objs_;
  const KvReach* reach_;
  RingSeat seat_;
  Phase phase_;
  int o_ = 0, t_ = 0;               // the next step: inner step t_ of outer step o_
  std::vector<int> last_free_;      // the last KV free, which the next KV receive waits for
  std::vector<int> last_dkv_free_;  // likewise for dKV (backward)
};

}  // namespace tilesim
