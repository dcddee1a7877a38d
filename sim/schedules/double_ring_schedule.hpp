// Double ring (forward): an inner ring inside each node, an outer ring across
// nodes.
//
// P = n * k ranks, k = inner ring size (default gpus_per_node), rank
// p = N*k + i is member i of node N. Rank p owns chunk p (contiguous; zigzag
// ownership under a causal mask). The KV of node M is circulated inside
// node N during outer step o = (N - M) mod n:
//   * rank (N, i) starts outer step o holding its slot KV[M*k + i], M = N - o;
//   * inner step t = 0..k-1: it computes Q[p] x KV[M*k + (i - t) mod k] while
//     passing that chunk to (N, i+1) and receiving the next from (N, i-1);
//   * the outer transfer, sending the slot to (N+1, i) and receiving the next
//     slot KV[(M-1)*k + i] from (N-1, i), joins the comm group of inner step 0
//     and so overlaps the k inner computes of the outer step (one comm stream
//     per rank: the next inner transfer waits for the outer one).
// Bytes received per rank: n*(k-1) * kv over the intra-node links plus
// (n-1) * kv across nodes: (P-1) * kv in all, as the ring, but only n-1 of
// them on the slower inter-node links.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner);

}  // namespace tilesim
