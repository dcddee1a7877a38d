// Which transfers of a mesh ring carry data, step by step (docs/schedules.md "Masks").
//
// A ring of n members; position x owns item x (its Q or KV chunk) and needs(y, x) says the
// member at position y has unmasked pairs on item x. A ring runs n-1 gather steps and, for
// partials, n-1 reduce steps; step s of every member is one comm group, matched across members.
// Two ways to move the items (the plan uses `direct` exactly when the mask may leave pairs
// empty: full and causal zigzag masks give every pair work and keep the ring):
//   ring (relay): gather step s sends item p-s to p+1 and receives item p-1-s from p-1 (hop
//     s+1 of both); reduce step s sends the partial of item p-1-s to p+1 and receives that of
//     p-2-s, summed along u+1, ..., u-1 and landing at u. With a mask, item x travels only as
//     far as its farthest reader, hops(x) = max{d : needs(x+d, x)}, and the reduce hop out of
//     position y carries the partial of u iff some member of u+1 .. y has work on u (one without
//     work forwards the object it received: reduce_carrier).
//   direct: step s is a shift by d_s = 1, n-1, 2, n-2, ... (nearest members first, both
//     sides): gather step s sends the own item to p+d_s if that member needs it and receives
//     item p-d_s if this member needs it; reduce step s sends this member's partial of item
//     p-d_s (the one gather step s brought) back to its owner, and receives the partial of its
//     own item from p+d_s if that member has work on it. Every item goes straight to the
//     members that read it and every partial straight home: no member relays what it does not
//     read. Bytes in per member: one item per other member it reads, one partial per other
//     member that reads its item.
#pragma once

#include <cstdint>
#include <vector>

namespace tilesim {

// One transfer of a step: `item` (a position, -1: nothing moves) to or from position `peer`;
// for partials `carrier` is the member whose partial object travels (relays forward the one
// they received).
struct MeshTransfer {
  int item = -1;
  int peer = -1;
  int carrier = -1;
};

class MeshRelay {
 public:
  // needs[y * n + x]; an empty vector means every member needs every item.
  MeshRelay(int n, std::vector<std::uint8_t> needs, bool direct = false);

  bool needs(int y, int x) const;
  bool direct() const { return direct_; }
  // The item that gather step s brings to position p (whether or not it moves); reduce step s
  // sends the partial of this item.
  int arrival(int p, int s) const;
  MeshTransfer gather_send(int p, int s) const;
  MeshTransfer gather_recv(int p, int s) const;
  MeshTransfer reduce_send(int p, int s) const;
  MeshTransfer reduce_recv(int p, int s) const;
  // The gather step that sends item x on from p, a member that received it (-1: never).
  int forward_step(int p, int x) const;

  // The ring's hop rules (relay mode).
  bool gather_hop(int x, int h) const;
  bool reduce_hop(int u, int y) const;
  int reduce_carrier(int u, int y) const;

 private:
  int offset(int s) const;
  int n_;
  std::vector<std::uint8_t> needs_;
  bool direct_;
  std::vector<int> gather_hops_;  // by item
};

}  // namespace tilesim
