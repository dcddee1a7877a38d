// Shift symmetry of a plan's transfer pattern on a topology, for symmetric simulation.
//
// The schedule gives, for every rank s of P, its peers D_s = (d_0, d_1, ...) (the ranks it
// sends to, in a fixed order) and the shifts K under which its programs are equivariant
// (rank r + K runs rank r's program with every rank and chunk index moved by K; for the
// ring every K, for a mesh a x b tile the multiples of a: a shift by whole Q-groups).
// R(s, i) = route(g(s), g(d_i)), g = placement. A shift by K (K | P, 2 <= K < P) is a
// symmetry when
//   - the peers are equivariant: d_i(s + K) = d_i(s) + K (mod P), and no peer of a
//     representative is itself in the quotient (d_i(s) mod K != s; not asked of an offset
//     quotient, whose transfers name their full peers: ShiftSearch::peers_by_offset);
//   - sigma: link R(s, i)[j] -> link R(s + K, i)[j] (every s, i, position j) is a well-defined
//     bijection of the used links that keeps each link's bandwidth, latency and class;
//   - the GPUs of different ranks are different, and a GPU a route relays through (NVLink to
//     a GPU whose NIC is on the destination's rail) or ends at maps to the shifted rank's GPU;
//   - where a node's ranks share compute cores, the ranks of every node of ranks 0..K-1 are
//     all below K (so they see the same computes).
// Then the whole simulation is invariant under sigma: by uniqueness of the max-min allocation
// and induction over the event sequence, the n = P / K copies sigma^i(F) of a flow F have
// equal rates and completion times. So ranks 0..K-1 (one per class) are simulated alone, each
// flow F carrying, on the orbit representative c of each link orbit, the multiplicity
//   m(c, F) = (n / |orbit(c)|) x |R_F intersect orbit(c)|
// (the copies of F crossing c in the full problem; the cyclic group acts freely on ranks, so
// |orbit(c)| divides n); GPU traffic is counted on the representative GPU g(r mod K), once per
// GPU of the route that lies in that GPU's orbit. A representative s sends to rank d_i(s) mod K
// of the quotient, and its flow goes to the GPU of d_i(s) (full_destination). The smallest K
// is taken; none gives classes = P.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sim/topology/topology.hpp"

namespace tilesim {

// An approximate quotient's assumptions (rank_roles.hpp): not a symmetry of the full run.
struct RoleApproximation {
  int first_rank = 0;               // b: the simulated block is ranks b..b+K-1
  Picoseconds slowest_step_ps = 0;  // the slowest step transfer, latency + bytes / bandwidth
  // The largest difference of step transfer times between two ranks of one role (r = r' mod K)
  Picoseconds role_spread_ps = 0;
};

// An approximate quotient's programs (symmetric_plan.hpp, causal zigzag-laid schedules): the
// ranks' programs have the same transfers but different work, and representative k runs the
// program of rank first_rank + k (first_rank a multiple of K), which every rank of its class is
// costed as. Ranks of one class then differ only in the shapes of their calls.
struct WorkApproximation {
  int first_rank = 0;  // w: representative k runs rank w + k's program
  // The most less the least compute of the end ranks costed, each alone (no communication
  // slowing it; ranks 0 and P - 1 where compute is affine in the rank, the first and last
  // blocks' for the mesh): how far the ranks' work lies apart, the scale of what the quotient
  // drops
  Picoseconds work_spread_ps = 0;
  // Ranks 0 and P - 1's FLOPs where every rank's are affine in its index, else empty. The ring
  // family over equal chunks: a causal query at position i meets i + 1 keys, and rank r's
  // queries are chunk r (contiguous: n^2 r + n (n + 1) / 2 pairs), positions r + jP (striped)
  // or chunks r and 2P - 1 - r (zigzag, the same for every r). The expanded result's compute
  // balance is then that line's, max(f_0, f_P-1) / ((f_0 + f_P-1) / 2), the full run's; its
  // per-rank totals stay the representatives'.
  std::optional<std::pair<double, double>> end_rank_flops;
};

struct RankShiftSymmetry {
  int full_ranks = 0;               // P
  int classes = 0;                  // K; == P when no shift is a symmetry
  std::vector<int> full_placement;  // rank -> GPU, P entries
  std::vector<int> link_canonical;  // per topology link: its orbit's representative, -1 unused
  std::vector<int> link_orbit_size;
  std::vector<int> gpu_canonical;  // per GPU: the representative rank's GPU, -1 unused
  // Per representative s < K: (quotient rank d mod K, full rank d) for each peer d of s.
  std::vector<std::vector<std::pair<int, int>>> full_peers;
  // The quotient is an offset quotient (ShiftSearch::peers_by_offset): its transfers name their
  // full peers, and full_peers is empty.
  bool peers_by_offset = false;
  // Set for a role quotient (rank_roles.hpp), whose results approximate the full run's.
  std::optional<RoleApproximation> roles;
  // Set for a work-block quotient (WorkApproximation), whose results approximate the full run's.
  std::optional<WorkApproximation> work;
  // A group quotient (rank_group_symmetry.hpp) numbers the ranks its own way: class_of_rank
  // gives the class of each rank of the plan's numbering (P entries), which the per-rank
  // figures are expanded by; empty: the class of rank r is r mod K (a shift's quotient).
  std::vector<int> class_of_rank;
  // A mesh quotient by rows and columns (sim/schedules/mesh_fold.hpp): {x, y}, the rotations by
  // x KV positions and y Q positions; the quotient plan is make_mesh_fold_plan's.
  std::optional<std::array<int, 2>> mesh_fold;
  // Either approximation: the result JSON's symmetry says exact: false.
  bool approximate() const { return roles.has_value() || work.has_value(); }
  // A quotient plan runs: exact to the picosecond unless roles is set (then the result JSON's
  // symmetry says exact: false and names the roles; exact: false without roles means no
  // quotient ran).
  bool exact() const { return classes < full_ranks; }
  int copies() const { return full_ranks / classes; }
  // The full plan's rank that representative `send_rank` reaches when its quotient transfer
  // goes to `recv_rank` (std::logic_error when that is not one of its peers).
  int full_destination(int send_rank, int recv_rank) const;
};

// The peers of every rank (peers[s], same order for every s; an entry equal to s is ignored).
using RankPeers = std::vector<std::vector<int>>;

struct ShiftSearch {
  std::vector<int> placement;              // rank -> GPU for all P ranks (empty = identity)
  RankPeers peers;                         // P entries
  std::function<bool(int)> shift_allowed;  // K the programs are equivariant under (null: all)
  bool node_cores_shared = false;          // the profile's compute_cores > 0
  // The quotient keeps full peers (an offset quotient, class_plan.hpp keep_class_programs):
  // a representative's peers may fold onto one class or onto itself, so the fold check of
  // the first condition is not made, and full_peers stays empty (full_destination unused).
  bool peers_by_offset = false;
  int max_classes = 0;  // > 0: only shifts K <= max_classes are tried
  // The role quotient only (rank_roles.hpp): where set, per GPU, the lanes of NCCL's ring
  // collectives (collective_lanes.hpp), and a transfer to a peer on another node is its lane
  // routes, as the flow model runs a collective step.
  std::vector<std::vector<int>> collective_lanes_by_gpu;
};

RankShiftSymmetry find_rank_shift_symmetry(const Topology& topology, ShiftSearch search);
// The same with the caller's router, whose routes another search may reuse (the mesh's fold,
// rank_group_symmetry.hpp, routes the same pairs).
RankShiftSymmetry find_rank_shift_symmetry(const Topology& topology, Router& router,
                                           ShiftSearch search);

// Peer i of s + k is peer i of s moved by k (mod P), and, unless by_offset, no two peers of a
// representative s < k (and not s itself) fold onto one quotient rank (mod k).
bool peers_equivariant(const RankPeers& peers, int k, bool by_offset);
// The peers of representative s < k (an entry equal to s ignored) fold mod k onto distinct
// quotient ranks, none of them s itself (the fold condition of a shift's and a group's
// quotient, rank_group_symmetry.hpp).
bool peers_fold_apart(const std::vector<int>& peers, int representative, int k);

}  // namespace tilesim
