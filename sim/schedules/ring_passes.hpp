// The pass-KV ring, forward and backward, over an ordered list of ranks (the
// ring members). Ring, zigzag and striped use one ring of all P ranks; USP runs
// one ring per head group across its Ulysses groups.
//
// Member k holds a set of query items (chunks whose Q, O, LSE, dO, dQ stay on
// it) and a bundle of key items (chunks whose KV, dKV travel). With m members,
// in step s = 0..m-1 member k works on bundle j = (k - s) mod m.
//
// Forward, step s: one comm group sends bundle j's KV to member k+1 and
// receives bundle j-1 from member k-1 (not in the last step); ONE compute op
// over every (query item, key item) pair with unmasked tokens, into O, LSE, as
// an implementation launches one attention call per ring step on its local Q
// and the received KV (ring-flash-attention ring_flash_attn.py; yunchang's USP
// ring over the Ulysses-gathered S/r tokens); then frees bundle j unless it is
// its own. A receive waits for the previous
// step's frees, so at most two foreign bundles are live (double buffering).
//   Bytes received per member: (m-1) * bundle KV bytes.
//
// Backward (FlashAttention-2 style), step s: group A sends/receives the KV
// bundles as in forward (prefetch); one compute op (one backward call) makes dQ
// (kept), dKV[j] (travelling)
// from Q, KV[j], dO, O, LSE; then, when m > 1, group B sends the dKV of bundle
// j to member k+1 and receives dKV of bundle j-1 from member k-1, and the sent
// dKV is freed. dKV makes m hops where KV makes m-1: in the last step every
// dKV reaches its home member holding all contributions.
//   Bytes received per member: (m-1) * bundle KV + [m > 1] * m * bundle dKV (fp32).
// Window (fewer steps): the ring runs n = ring_steps() steps, 1 + the last step at which some
// member has unmasked pairs with the bundle it holds (n = m for full and causal masks; for a
// sliding window of W tokens over contiguous chunks of c tokens n = 1 + min(m-1,
// ceil((W-1)/c))). KV then makes n-1 hops; in the last backward step each dKV goes straight to
// its home member (k - n + 1: the next member when n = m), so dKV makes n hops.
//   Bytes received per member: (n-1) * bundle KV, and backward [n > 1] * n * bundle dKV.
// Two directions (zigzag under a window, zigzag_schedule.hpp): a member may also hold
// back_keys, a bundle that travels the other way (to member k-1); in step s member k then also
// works on back bundle k+s. A key may carry its own hop count h (RingKey::hops): it travels h
// hops, to the farthest member on its side that has work on it, so KV moves only as far as it
// is read. Each direction runs n = 1 + its largest hop count (ring_steps, ring_back_steps);
// both share one comm group per step and one compute op per step. Backward a key's dKV follows
// it and, after its h-th hop, goes straight back to its owner. With no back keys and no hop
// counts the programs are exactly the one-way ring's.
//   Bytes received per member: h kv per key over the hops that end at it (a key's hop j ends
//   at the member j positions from its owner on its side), and backward also its dKV on the
//   same hops plus, per own key with h > 0, its dKV coming home.
// Every key item must have an unmasked block with some query item of its own
// member (true for the diagonal in all layouts used), so that step 0 creates it.
#pragma once

#include <algorithm>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/fusing_builder.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

struct RingQuery {
  int chunk = -1;
  int q = -1, o = -1, lse = -1;
  int d_o = -1, dq = -1;  // backward only
};

struct RingKey {
  int chunk = -1;
  int kv = -1;
  int dkv = -1;   // backward only
  int hops = -1;  // two-direction rings: hops this key travels; -1: its direction's n - 1
};

struct RingMember {
  int rank = 0;
  std::vector<RingQuery> queries;
  std::vector<RingKey> keys;
  std::vector<RingKey> back_keys = {};  // travel to member k-1 (two-direction rings only)
};

// Routes the keys of a one-way ring (no back keys, no hop counts) by their readers under the
// plan's mask: with F (G) the largest offset towards k+1 (k-1) of a member with work on a key,
// it travels F hops forward if F <= G, else G hops back (the way that reaches every reader in
// fewer hops). When that two-direction ring needs no fewer steps than the one-way ring, the
// keys stay one-way and each stops after F hops (its farthest reader), which never moves more.
// USP's rings under a window (usp_schedule.hpp).
void route_keys_by_readers(const Plan& plan, std::vector<RingMember>& ring);

// Steps the ring needs for this plan's mask (see above), for `keys` and for `back_keys`.
int ring_steps(const Plan& plan, const std::vector<RingMember>& ring);
int ring_back_steps(const Plan& plan, const std::vector<RingMember>& ring);
void add_ring_forward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups);
// The forward programs of members 0..classes-1 only, each the full ring's program except that
// member classes-1 sends to member 0 and member 0 receives from member classes-1 (the
// representatives of a shift symmetry by `classes` members, sim/model/ring_symmetry.hpp).
void add_ring_forward_classes(Plan& plan, const std::vector<RingMember>& ring, int classes,
                              CommGroups& groups);
// emit_members >= 0: the programs of members 0..emit_members-1 only, naming their peers as full
// ranks (a quotient plan's, folded by fold_onto_classes in class_plan.hpp). wait_for_forward
// (the ring's pass both): a member's first backward call also waits for the last comm group of
// the program so far, its forward's last exchange, as an implementation's forward returns only
// after its last wait (ring-flash-attention ring_flash_attn.py waits on the step's
// send/recv before the next step and returns after the loop) and the backward runs after it.
// Without it a member whose forward ends in steps without work (the causal ring's rank 0, a
// window) would start its backward while its forward still passes keys on.
void add_ring_backward(Plan& plan, const std::vector<RingMember>& ring, CommGroups& groups,
                       int emit_members = -1, bool wait_for_forward = false);

// What member k's step generators below share: the plan they append to, the ring, the comm
// groups, the member's builder and its step count. `plan`, `ring`, `groups` and `scratch` must
// outlive it; steps of different members may interleave.
class RingMemberSteps {
 public:
  bool done() const { return step_ >= std::max(n_f_, n_b_); }
  bool started() const { return step_ > 0; }

 protected:
  RingMemberSteps(Plan& plan, FusingScratch& scratch, const std::vector<RingMember>& ring, int k,
                  int forward_steps, int back_steps, CommGroups& groups);

  Plan& plan_;
  const std::vector<RingMember>& ring_;
  CommGroups& groups_;
  FusingBuilder build_;
  int k_, n_f_, n_b_;
  int step_ = 0;
};

// Member k's forward program one ring step at a time, into plan.programs[its rank], sending to
// rank `next` and receiving from rank `prev` (add_ring_forward emits every step of every member
// with this; a windowed simulation asks for steps as it runs, ring_classes_source.hpp).
class RingMemberForward : public RingMemberSteps {
 public:
  RingMemberForward(Plan& plan, FusingScratch& scratch, const std::vector<RingMember>& ring, int k,
                    int next, int prev, int forward_steps, int back_steps, CommGroups& groups);
  void emit_step();  // appends step step_ (not when done())

 private:
  int rank_, next_, prev_;
  std::vector<int> last_frees_;  // the previous step's frees, which this step's receives wait for
};

// Member k's backward program one ring step at a time, with the ring's own neighbours
// (add_ring_backward emits every step of every member with this).
class RingMemberBackward : public RingMemberSteps {
 public:
  // wait_for_forward: as add_ring_backward's (the program so far must hold the forward's last
  // comm group when step 0 is emitted).
  RingMemberBackward(Plan& plan, FusingScratch& scratch, const std::vector<RingMember>& ring, int k,
                     int forward_steps, int back_steps, CommGroups& groups,
                     bool wait_for_forward = false)
      : RingMemberSteps(plan, scratch, ring, k, forward_steps, back_steps, groups),
        wait_for_forward_(wait_for_forward) {}
  void emit_step();  // appends step step_ (not when done())

 private:
  bool wait_for_forward_;
  std::vector<int> last_kv_frees_, last_dkv_frees_;  // the previous step's, as forward's
};

}  // namespace tilesim
