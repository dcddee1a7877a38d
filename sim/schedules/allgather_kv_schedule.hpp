// All-gather KV (Llama-3 style context parallelism), forward.
//
// Rank r owns chunk r (contiguous; zigzag ownership under a causal mask to
// balance the work: every rank then has (2P-1) full + 2 diagonal blocks of
// (S/2P)^2 pairs). KV is all-gathered as a pairwise exchange
// (pairwise_exchange.hpp): in step t = 1..P-1 rank r sends KV[r] to r+t and
// receives KV[r-t]. Rank r computes Q[r] x KV[r] first and Q[r] x KV[r-t] as
// each arrives (a compute waits for its receive), then frees the received KV.
// Peak memory holds up to all P KV chunks (S tokens of K and V).
// Bytes received per rank, c = S/P: (P-1) * kv; sent: (P-1) * kv.
#pragma once

#include "sim/plan/plan.hpp"

namespace tilesim {

Plan make_allgather_kv_plan(const AttentionShape& shape, int ranks);

}  // namespace tilesim
