// The pieces of USP's generator (usp_schedule.hpp) that emit one rank's program, shared by the
// whole-plan generator and the step-wise quotient (usp_classes_source.hpp), so that both emit
// the same ops by construction.
//
// Rank x = G u + h is member h of Ulysses group G and member G of head ring h (see
// usp_forward_rank below for its forward program).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/plan/comm_groups.hpp"
#include "sim/plan/fusing_builder.hpp"
#include "sim/plan/plan.hpp"
#include "sim/schedules/ring_passes.hpp"

namespace tilesim {

// Object ids indexed by chunk id p*u + h; the backward ones are empty without a backward pass.
struct UspHeadObjects {
  std::vector<int> q, kv, o, lse, d_o, dq, dkv;
};

struct UspGrid {
  int u = 1;    // ranks per Ulysses group = head groups
  int r = 1;    // ring groups
  int rep = 1;  // ranks holding a copy of each KV head (u / kv_heads when u > kv_heads)
  int chunk(int p, int h) const { return p * u + h; }
  int head_rank(int p, int h) const { return (p / u) * u + h; }  // who computes chunk (p, h)
};

// The grid of `ranks` GPUs with Ulysses degree u; ScheduleError (naming the key) where the
// shape does not divide.
UspGrid usp_grid(const AttentionShape& shape, int ranks, int u, const std::string& name);

// The plan's header, chunks and objects (no programs' ops yet: `ranks` empty programs).
// first_rank w (a multiple of u): the plan relabelled r -> r - w, each rank's chunks holding
// the tokens of rank r + w's (rotate_chunk_contents), for a work-block quotient.
Plan make_usp_grid_plan(std::string name, const AttentionShape& shape, int ranks,
                        const UspGrid& grid, UspHeadObjects& objs, int first_rank = 0);

// The ring of head group h across the r Ulysses groups (keys routed by readers under a window
// or documents).
std::vector<RingMember> usp_head_ring(const Plan& plan, const UspGrid& grid,
                                      const UspHeadObjects& objs, int h);

// objs.<tensor>[chunk], -1 where the pass has no such object.
int usp_object(const std::vector<int>& v, int i);

// Rank x's part of an all-to-all inside its Ulysses group: objects(p_from, p_to) lists what
// rank p_from sends to rank p_to (both of x's group).
using UspExchangeObjects = std::function<std::vector<int>(int, int)>;
void usp_exchange_member(Plan& plan, CommGroups& groups, const UspGrid& grid, int x,
                         const UspExchangeObjects& objects, std::span<const int> recv_after = {});

// Frees, on rank x, the objects `pick(chunk (p, h_x))` of every other rank p of its group
// (received inputs, or outputs already sent to p).
void usp_free_foreign(Plan& plan, const UspGrid& grid, int x,
                      const std::function<std::vector<int>(int)>& pick);

// Steps of a head ring (ring_steps, ring_back_steps: the same for every member).
struct UspRingSteps {
  int forward = 1, back = 1;
};
UspRingSteps usp_ring_steps(const Plan& plan, const std::vector<RingMember>& ring);

// Rank x's forward program, piece by piece; usp_forward_rank emits them all in order:
//   prologue: the all-to-all of Q and KV in x's group;
//   ring step 0 (usp_ring_member: member G of head ring h, its ring closed over the first
//     `ring_groups` groups: r for the full plan, K / u for a quotient's);
//   usp_free_own_bundle: forward alone, the frees of the KV that x received for its own bundle
//     (read by step 0 only, sent on at step 0);
//   ring steps 1.. ;
//   epilogue: the all-to-all back of O, its receives waiting for the ring's last op (posted once
//     the attention is done), then, forward alone, the frees of the other members' Q and O.
// The frees follow their last readers, and the receives' wait is no later than the group's
// sends (which wait for the last call's O): the placement matters to the windowed tracker,
// which must see each op before its prerequisites have all finished, not to the timeline.
void usp_forward_prologue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                          const UspHeadObjects& objs, int x);
std::unique_ptr<RingMemberForward> usp_ring_member(Plan& plan, FusingScratch& scratch,
                                                   const std::vector<RingMember>& ring,
                                                   UspRingSteps steps, const UspGrid& grid, int x,
                                                   int ring_groups, CommGroups& groups);
void usp_free_own_bundle(Plan& plan, const UspGrid& grid, const UspHeadObjects& objs, int x);
void usp_forward_epilogue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                          const UspHeadObjects& objs, int x);
void usp_forward_rank(Plan& plan, CommGroups& groups, FusingScratch& scratch,
                      const std::vector<RingMember>& ring, UspRingSteps steps, const UspGrid& grid,
                      const UspHeadObjects& objs, int x, int ring_groups);

// Rank x's backward program, piece by piece; usp_backward_rank emits them all in order:
//   prologue: the all-to-all of dO in x's group;
//   usp_backward_step: one step of member G of head ring h (usp_backward_member, the full
//     ring's neighbours); after step 0 the frees of the KV that x received for its own bundle
//     (read by step 0 only, sent on at step 0), after the last step the frees of what the ring
//     read of every other member (dO, Q, O). Each free follows its last reader in the same
//     piece, so that the windowed tracker derives it before that reader has finished;
//   epilogue: the all-to-all back of dQ and dKV, the frees of the other members' dQ and dKV,
//     and on an owner whose KV heads are replicated (rep > 1) one merge summing the replicas'
//     dKV into the output's, then their frees.
void usp_backward_prologue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                           const UspHeadObjects& objs, int x);
std::unique_ptr<RingMemberBackward> usp_backward_member(Plan& plan, FusingScratch& scratch,
                                                        const std::vector<RingMember>& ring,
                                                        UspRingSteps steps, const UspGrid& grid,
                                                        int x, CommGroups& groups);
void usp_backward_step(Plan& plan, RingMemberBackward& member, const UspGrid& grid,
                       const UspHeadObjects& objs, int x);
void usp_backward_epilogue(Plan& plan, CommGroups& groups, const UspGrid& grid,
                           const UspHeadObjects& objs, int x);
void usp_backward_rank(Plan& plan, CommGroups& groups, FusingScratch& scratch,
                       const std::vector<RingMember>& ring, UspRingSteps steps, const UspGrid& grid,
                       const UspHeadObjects& objs, int x);

}  // namespace tilesim
