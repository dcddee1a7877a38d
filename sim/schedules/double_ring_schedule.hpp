// Double ring (forward and backward): an inner ring inside each node, an outer
// ring across nodes (LoongTrain's double-ring attention, which trains with it).
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
//
// Backward: KV circulates exactly as in the forward; after the compute of
// each inner step (one backward call: dQ[p] kept, dKV[cur] accumulating),
// dKV[cur] goes to the inner successor (when k > 1), so after the k inner
// steps of an outer step the rank holds its slot's dKV again, and then (when
// n > 1) to the outer successor, which computes that slot in its next outer
// step; the n-th outer hop brings every dKV home with all P contributions.
// A dKV receive waits for the previous dKV free (double buffering).
// Backward bytes received per rank: (P-1) * kv + ([k > 1] * n*k + [n > 1] * n)
// * dkv; with n = 1 this is the ring's (P-1) * kv + P * dkv.
//
// Masks (sliding_window, documents): chunks are contiguous (a zigzag chunk is read on both
// sides of its rank, so nothing could stop early) and chunk x = M*k + j travels only as far
// as it is read: its spine, the outer hops (M, j) -> (M+1, j) -> ..., up to the last node
// with a reader (nodes in between relay it), and at each node M+o of the spine its branch,
// the inner hops (M+o, j+1), ..., up to that node's farthest reader. The plan runs 1 + the
// longest spine outer steps and, in outer step o, 1 + the longest branch there inner steps.
// Backward the dKV follows each hop; a branch's last holder sends it straight back to the
// spine rank (M+o, j), and the spine's last node straight home to (M, j). With W <= c (rank
// p reads chunk p-1 only), rank p = N*k + i receives
//   forward  ([p >= 1] + [i = k-1, N >= 1]) kv   ((N, k-1) relays chunk N*k-1 to (N, 0))
//   backward that KV + a dkv with each, + ([i < k-1] + [i = k-1, N >= 1] + [i = k-1,
//            N <= n-2]) dkv coming back (tests/test_schedules_masks.cpp).
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_double_ring_plan(const AttentionShape& shape, int ranks, int inner);

// The programs (forward, backward or both) of ranks 0..classes-1 only, a quotient plan for
// symmetric simulation (sim/model/symmetric_simulation.hpp): classes a multiple of `inner`
// dividing `ranks` (a shift by whole inner rings maps rank p's program onto p + classes's),
// plan.ranks = classes, every send and recv naming its full peer mod classes (class_plan.hpp),
// the chunks and objects of all ranks (those homed beyond `classes` never live).
// std::invalid_argument for classes not allowed. first_rank w > 0 (a multiple of classes; a
// work-block quotient of a causal mask): the programs are those of ranks w..w+classes-1 of the
// full plan relabelled r -> r - w (rotate_chunk_contents, chunk_layouts.hpp).
Plan make_double_ring_classes_plan(const AttentionShape& shape, int ranks, int inner, int classes,
                                   int first_rank = 0);

}  // namespace tilesim
