// Zigzag ring: causal load balancing for the pass-KV ring.
//
// The sequence is cut into 2P contiguous blocks of h = S/2P tokens; rank r owns
// blocks r and 2P-1-r (chunk_layouts.hpp, plan.layout.blocks = 2P). The ring
// itself is ring_schedule.hpp's. Under a causal mask each rank then computes
// (2P-1) full blocks + 2 diagonal halves of (S/2P)^2 pairs: max/mean = 1.
// Bytes received per rank, c = S/P: forward (P-1) * kv; backward
// (P-1) * kv + P * dkv (fp32); the same as the plain ring.
//
// Under a sliding window (or documents) the one-way ring cannot stop early: the high block
// 2P-1-r needs block 2P-2-r, owned by rank r+1, which a ring towards r+1 brings last. So the
// zigzag plan then runs a ring in both directions, as an implementation would post it (one
// isend/irecv pair per direction per step, where ring-flash-attention's zigzag posts one): the
// chunks become the 2P blocks (chunk i = block i, owned by i < P ? i : 2P-1-i, kv/2 each) and
// each block travels one way, as far as its farthest reader on that side (ring_passes.hpp,
// per-key hops): a low block r towards r+1 (the low blocks after it), a high block towards
// r-1 (the high blocks after it belong to lower ranks), a block read on both sides the shorter
// way round that reaches all its readers. With W <= h = S/2P a block is read only by the block
// after it, so low block r goes to r+1 (r < P-1) and high block 2P-1-r to r-1 (r > 0), one hop:
//   bytes in (fwd) = kv (kv/2 at ranks 0 and P-1)
//   bytes in (bwd) = kv + 2 dkv (kv/2 + dkv at ranks 0 and P-1)
// (S = 1M, P = 64, W = 4K: 64 MiB per rank forward instead of 63 kv = 3.94 GiB). Wider windows:
// tests/test_schedules_masks.cpp counts the same rule from token visibility. The two-direction
// plan is used only where it needs fewer steps than the one-way ring (never under full or
// causal masks, where every step has work and the one-way ring's steps are balanced).
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_zigzag_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
