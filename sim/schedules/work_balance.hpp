// Token blocks assigned to ranks by attention work (`schedule.balance: work`).
//
// The S tokens are cut into k*P contiguous blocks of c = S/(kP) tokens. A block's work is the
// number of unmasked (query, key) pairs of its queries against the whole sequence,
//   w(b) = pairs(block b, positions 0 .. S-1)      (attention_mask.hpp closed forms),
// which is what a pass-KV ring or an all-gather rank computes for it. Blocks are dealt by the
// longest-processing-time rule with equal block counts: in decreasing w (ties: lower block
// first) each block goes to the least-loaded rank that still has fewer than k blocks (ties:
// lower rank). LPT's max load is within 4/3 of optimal (Graham 1969) and, with many blocks
// per rank, within one block's work of the mean. k is the first of 2, 4, 8, 16, 32 (with
// kP | S) whose max/mean load is <= 1.01, else the one with the lowest max/mean.
#pragma once

#include <vector>

#include "sim/plan/attention_shape.hpp"
#include "sim/plan/token_layout.hpp"

namespace tilesim {

struct WorkAssignment {
  int blocks_per_rank = 0;
  std::vector<std::vector<int>> rank_blocks;  // ascending block indices of each rank
  double max_over_mean = 1.0;                 // of the per-rank work
};

// LPT over k*P contiguous blocks for one k (S must be divisible by k*P).
WorkAssignment assign_blocks_by_work(const AttentionShape& shape, int ranks, int blocks_per_rank);
// The k chosen as described above; throws ScheduleError when no candidate k divides S.
WorkAssignment balanced_assignment(const AttentionShape& shape, int ranks);

}  // namespace tilesim
