// The classes of a mesh's fold by rows and columns (sim/schedules/mesh_fold.hpp), worked out
// by hand for a rail-optimised fat tree of 8-GPU nodes (DGX H100) whose leaf groups hold
// leaf_gpus GPUs, P a power of two: the equality tests' expected values.
//
// The positions of one group of s consecutive GPUs (s = a node-major, b kv-group-major) turn by
// d inside it, and whole groups move by e (the other side), a GPU shift by e s. On one node
// every permutation of the GPUs maps routes onto routes (NVSwitch star). Across nodes a route
// to GPU j of another node relays over NVLink to the sender's GPU j, then rail j, so an
// automorphism maps nodes onto nodes with one permutation of the local indices for all of
// them; across leaf groups it must also map leaf groups onto leaf groups (a route inside a
// leaf group has two switch hops fewer). So the turn applies where the group lies inside a
// node (s <= 8), or inside a leaf group moving whole nodes (8 | d), or moves whole leaf groups
// (leaf_gpus | d); the shift where it moves whole nodes within one leaf group (P <= leaf_gpus,
// 8 | e s) or whole leaf groups (leaf_gpus | e s). x and y are the smallest such d and e (at
// least 2 where the side is), and classes = x y where that is below P, else P.
#pragma once

#include <string>

#include "sim/schedules/mesh_tile.hpp"

namespace tilesim::test {

// The smallest divisor d >= 2 of n that `allowed` takes, 1 for n = 1, 0 for none.
template <typename Allowed>
int smallest_divisor(int n, Allowed allowed) {
  if (n == 1) return 1;
  for (int d = 2; d <= n; ++d) {
    if (n % d == 0 && allowed(d)) return d;
  }
  return 0;
}

inline int expected_fold_classes(int gpus, MeshTile tile, const std::string& placement,
                                 int leaf_gpus) {
  const bool kv = placement == "kv-group-major";
  const int s = kv ? tile.b : tile.a;  // the side inside a group of consecutive GPUs
  const int other = kv ? tile.a : tile.b;
  const bool one_node = gpus <= 8;
  const int turn = smallest_divisor(s, [&](int d) {
    return one_node || s <= 8 || (s <= leaf_gpus ? d % 8 == 0 : d % leaf_gpus == 0);
  });
  const int shift = smallest_divisor(other, [&](int e) {
    return one_node || (gpus <= leaf_gpus ? (e * s) % 8 == 0 : (e * s) % leaf_gpus == 0);
  });
  const int k = turn * shift;
  return k > 0 && k < gpus ? k : gpus;
}

}  // namespace tilesim::test
