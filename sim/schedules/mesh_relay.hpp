// Which hops of a mesh ring carry data when the mask leaves (Q chunk, KV chunk) pairs empty
// (docs/schedules.md "Masks").
//
// A ring of n members; position x owns item x (its Q or KV chunk) and needs(y, x) says the
// member at position y has unmasked pairs on item x. Hop h of an item leaves position x+h-1
// for x+h (positions mod n, h = 1 .. n-1).
//   gather: item x travels x -> x+1 -> ... only as far as the farthest member that needs it,
//     hops(x) = max{d : needs(x+d, x)} (0 if none); hop h exists iff h <= hops(x). A member
//     between x and that one receives it to forward it even if it has no work on it.
//   reduce: the partial of item u is summed along u+1, ..., u+n-1 and lands at u; the hop out
//     of position y carries a partial iff some member of u+1 .. y has work on u, so a member
//     with no work forwards what it received unchanged (the same object: reduce_carrier), and a
//     chain with no work sends nothing.
// Full and causal (zigzag) masks give every pair work: every hop exists, as before.
#pragma once

#include <cstdint>
#include <vector>

namespace tilesim {

class MeshRelay {
 public:
  // needs[y * n + x]; an empty vector means every member needs every item.
  MeshRelay(int n, std::vector<std::uint8_t> needs);

  bool needs(int y, int x) const;
  // Hop h (1 .. n-1) of gathered item x.
  bool gather_hop(int x, int h) const;
  // The hop of item u's partial out of position y (y != u) carries a partial.
  bool reduce_hop(int u, int y) const;
  // Whose partial of u that hop carries: the last member of u+1 .. y with work on u (a member
  // without work forwards the object it received), -1 if none.
  int reduce_carrier(int u, int y) const;

 private:
  int n_;
  std::vector<std::uint8_t> needs_;
  std::vector<int> gather_hops_;  // by item
};

}  // namespace tilesim
