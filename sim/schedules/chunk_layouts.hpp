// Plans with one token chunk per rank, in the three ownerships the ring-like
// schedules use (S tokens, P ranks, chunk r owned by rank r):
//   contiguous: P blocks, chunk r = block r           (needs P | S)
//   zigzag:     2P contiguous blocks, chunk r = {r, 2P-1-r}  (needs 2P | S);
//               under a causal mask every chunk then does
//               (2P-1) full + 2 diagonal blocks of (S/2P)^2 pairs: balanced
//   striped:    P striped blocks, chunk r = tokens r, r+P, ...  (needs P | S);
//               rank r does (r+1) c(c+1)/2 + (P-1-r) c(c-1)/2 causal pairs
//               per kv chunk set, within a factor 1 + O(P/c) of the mean
//   work:       k*P contiguous blocks dealt to ranks by their unmasked pairs
//               (work_balance.hpp; schedule.balance: work)
#pragma once

#include <string>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

enum class ChunkOwnership { contiguous, zigzag, striped, work };

// Throws ScheduleError (key attention.seq_len) when S does not split evenly.
Plan make_chunked_plan(std::string schedule, const AttentionShape& shape, int ranks,
                       ChunkOwnership ownership);

// A chunked plan relabelled so that rank first_rank is rank 0: chunk c takes the tokens of
// chunk (c + chunk_shift) mod C (C chunks) and keeps its owner and head group, so a generator
// that addresses chunks by rank index emits, for rank r, the program rank r + first_rank has
// in the plan before the relabel (a work-block quotient, rank_shift_symmetry.hpp
// WorkApproximation). chunk_shift = first_rank where chunk r is rank r's, first_rank x u where
// rank r holds chunks r u .. r u + u - 1 (USP's head groups). Call before the objects and
// programs are added; 0 changes nothing.
void rotate_chunk_contents(Plan& plan, int chunk_shift);

// The general form: chunk c takes the tokens of chunk source[c] (a permutation of the chunks)
// and keeps its owner and head group; a mesh numbered column by column takes whole columns of
// its tile as a work block (mesh_schedule.hpp). Before the objects and programs are added.
void permute_chunk_contents(Plan& plan, const std::vector<int>& source);

}  // namespace tilesim
