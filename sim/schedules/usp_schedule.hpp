// Ulysses and USP (Ulysses x ring), forward and backward.
//
// P = u * r ranks: u ranks of all-to-all inside each of r ring groups; rank
// x = G*u + h is member h of group G (Ulysses alone: u = P, r = 1). Heads are
// split in u head groups (plan.head_groups = u): chunk (p, h), id p*u + h,
// holds rank p's c = S/P tokens for heads/u query heads and kv_heads/u kv
// heads, so its objects are 1/u of a full chunk's bytes and a compute between
// two such chunks does 1/u of the FLOPs of its token pairs (plan.hpp). After
// the all-to-all, rank (G, h) computes group G's S/r query tokens against all
// S keys for heads/u heads: FLOPs per rank = total / P.
// Ownership: contiguous; with a causal mask and r > 1, zigzag over the P
// ranks (group G then holds blocks [G*u, G*u+u) and their mirror), which
// balances the ring groups exactly.
//
// Forward on rank x = (G, h):
//   1. all-to-all in group G (pairwise_exchange.hpp): x sends Q[x, h'], KV[x, h']
//      to member h' and receives Q[p, h], KV[p, h] from every p in G;
//   2. ring over the r ranks (G', h), G' = 0..r-1 (ring_passes.hpp), the key
//      bundle of (G', h) being KV[p, h] for p in G': O[p, h] and LSE[p, h]
//      accumulate on x for p in G;
//   3. all-to-all back: x sends O[p, h] to its owner p, receives O[x, h'] (posted once
//      the ring's last op is done). LSE[p, h] stays on x, where the backward needs it.
//   Forward alone, x frees the KV[p, h] it received right after ring step 0 (its own
//   bundle: read and sent on there only) and the other members' Q and O at the end
//   (usp_grid.hpp says why the placement matters to the windowed tracker only).
// Backward on x (after the forward, or from its saved state: Q, KV, O, LSE in
// head layout on x, dO at the owner):
//   1. all-to-all of dO; 2. the backward ring (dKV travels with KV, r hops);
//   3. all-to-all back of dQ[p, h] and dKV[p, h] to their owners p.
// Dtypes (attention_shape.hpp): O and dQ move only finished, in the output
// dtype (of); dKV too when r = 1 (dkvf); with r > 1 it travels the ring
// unfinished and is one object, so it is a partial (dkv) on both legs.
// Bytes received per rank, with q, kv, of, dkv of c = S/P tokens:
//   forward  (u-1)/u * (q + kv + of) + (r-1) * kv
//   backward (u-1)/u * (q + of + D) + (r-1) * kv + [r > 1] * r * dkv,
//   D = dkvf when r = 1, dkv when r > 1 (dO in, dQ and dKV back).
// Ulysses needs heads divisible by u, and kv_heads divisible by u or u divisible
// by kv_heads (ScheduleError otherwise, saying why).
// KV replication (u > kv_heads, u = rep * kv_heads): each head group's heads/u
// query heads then share ONE KV head (kv head h*kv_heads/u), which rep ranks of
// the group hold (as DeepSpeed-Ulysses and Megatron replicate KV heads for GQA
// beyond the KV-head count): a KV or dKV chunk (p, h) is 1/kv_heads of a full
// one instead of 1/u, so with m = min(u, kv_heads) the KV terms above become
//   (u-1) * kv/m (all-to-all) and (r-1) * u * kv/m (ring), and likewise dkv,
// i.e. rep times the bytes of the unreplicated KV; the owner sums the rep dKV
// copies of each KV head it receives into the first (one merge op).
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_usp_plan(const AttentionShape& shape, int ranks, int ulysses_degree);

// The programs (forward, backward or both) of the ranks of Ulysses groups 0..classes/u - 1
// only, a quotient plan for symmetric simulation (sim/model/symmetric_simulation.hpp): a shift
// by whole Ulysses groups maps rank x's program onto x + classes's (its all-to-all peers are
// its group, its ring peers the same head group's members of the next and previous groups).
// classes must be a multiple of u dividing `ranks` and at least 2u (with one group a
// representative's ring successor would be its own image); plan.ranks = classes, peers
// folded mod classes (class_plan.hpp), the chunks and objects of all ranks.
// std::invalid_argument otherwise. Ulysses alone (u = P) has no quotient: its one all-to-all
// makes every rank a peer of every other. first_rank w > 0 (a multiple of u; a work-block
// quotient of the causal mask): the programs are those of ranks w..w+classes-1 of the full plan
// relabelled r -> r - w (each rank's chunks hold rank r + w's tokens: rotate_chunk_contents).
Plan make_usp_classes_plan(const AttentionShape& shape, int ranks, int ulysses_degree, int classes,
                           int first_rank = 0);
Plan make_ulysses_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
