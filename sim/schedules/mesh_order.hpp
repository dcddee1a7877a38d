// The order of the ring steps inside a Mesh-Attention tile, and the greedy
// that chooses it.
//
// A rank of an a x b tile takes part in three logical rings (mesh_tile.hpp):
//   Q  all-gather on the Q-group ring,  a-1 steps; step s brings the Q chunk
//      of Q-group position (p-1-s) mod a (p = own position);
//   KV all-gather on the KV-group ring, b-1 steps; step s brings the KV chunk
//      of KV-group position (t-1-s) mod b;
//   R  reduce of (O, LSE) partials on the Q-group ring, a-1 steps; step s
//      sends the partial of Q position (p-1-s) mod a, receives the partial of
//      position (p-2-s) mod a and merges it into its own; the last step
//      delivers each Q chunk's sum to its owner.
// Every step is one comm group (one send and one recv), so the steps of a rank
// run one after another, and all ranks use the same order (the k-th group of
// every rank is the same kind of step, so sends and receives match).
// Restrictions an order must obey:
//   * R step s needs every KV step done (the partial covers all of the tile's
//     KV chunks) and Q step s done (the partial's Q chunk is present);
//   * with a window w > 0 on a ring, the recv of its n-th chunk (n > w) waits
//     for the free of its (n-w)-th chunk; a Q chunk can only be freed once all
//     KV steps are done (it meets every KV chunk) and vice versa, so a Q step
//     beyond the Q window needs all KV steps done and a KV step beyond the KV
//     window needs all Q steps done. Windows are 0 (unlimited) or >= 2 (a
//     chunk is freed after it has been forwarded, one step after arrival).
// The greedy (our reading of the paper's rule, whose full text we lack):
//   next step = the allowed step that unlocks the most blocks per byte moved;
//   a Q step unlocks (KV chunks present) blocks, a KV step (Q chunks present),
//   an R step none; ties go to the smaller step, then Q before KV. Once R
//   steps are allowed (every KV chunk in), an R step is taken whenever the
//   previous step was not one, so the reduction alternates with the Q steps
//   left and moves while newly unlocked blocks compute (R-first-when-allowed
//   was within 5% of the exhaustive best in tests/test_mesh_sim.cpp, R-last
//   was 14% off on a communication-bound 4x2 tile). The compute side of the
//   greedy ("hold back ready blocks to cover later stalls") is in
//   mesh_schedule.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class MeshStep : std::uint8_t { q, kv, reduce };

struct MeshWindows {
  int q = 0;   // received Q chunks cached at once (0 = unlimited)
  int kv = 0;  // received KV chunks cached at once (0 = unlimited)
};

using MeshOrder = std::vector<MeshStep>;

// True when `order` has exactly a-1 Q, b-1 KV and a-1 R steps and obeys the
// restrictions above.
bool mesh_order_allowed(int a, int b, const MeshOrder& order, MeshWindows windows);

// The greedy order. Throws std::invalid_argument when the windows leave no
// allowed order (both windows smaller than their rings).
MeshOrder greedy_mesh_order(int a, int b, double q_bytes, double kv_bytes, MeshWindows windows);

// Every allowed order (for the exhaustive comparison in tests; grows as the
// multinomial of the step counts, keep a and b small).
std::vector<MeshOrder> all_mesh_orders(int a, int b, MeshWindows windows);

// "QQKR..." (Q, K, R per step), for reports and test messages.
std::string to_string(const MeshOrder& order);

}  // namespace tilesim
