// All-gather KV (Llama-3 style context parallelism), forward and backward.
//
// Rank r owns chunk r (contiguous; zigzag ownership under a causal mask to
// balance the work: every rank then has (2P-1) full + 2 diagonal blocks of
// (S/2P)^2 pairs). KV is all-gathered in one comm group (pairwise_exchange.hpp:
// every peer's send and receive posted together, as NCCL's grouped send/recv runs them;
// NCCL's own all-gather is a ring, see allgather_kv_cost_warning). Rank r then runs
// ONE attention call of Q[r] against all gathered KV (TransformerEngine's
// cp_comm_type all_gather, transformer_engine/pytorch/attention/
// dot_product_attention/context_parallel.py, gathers KV with
// gather_along_first_dim before it attends: no per-step correction), then frees
// the received KV.
// Peak memory holds up to all P KV chunks (S tokens of K and V).
// Bytes received per rank, c = S/P: (P-1) * kv; sent: (P-1) * kv. Only the chunks rank r's
// queries see travel: with a sliding window W <= S/2P over the zigzag chunks, rank r needs the
// chunks of ranks r-1 (for block r) and r+1 (for block 2P-1-r): 2 * kv for 0 < r < P-1 and
// 1 * kv at both ends.
//
// Backward, as TransformerEngine's AttnFuncWithCPAndKVAllGather.backward does
// (context_parallel.py: it gathers K and V again, accumulates dK, dV in the
// gathered coordinates and ends with reduce_scatter_along_first_dim of dK and
// of dV): KV is all-gathered again (the forward kept only its own chunk); ONE
// backward call of Q[r], dO[r] against the gathered KV writes dQ[r] and one
// dKV contribution per chunk j (into dKV[r] itself for j = r, else into a
// partial dKV[j]@r); the reduce-scatter is one grouped send/recv in which r
// sends dKV[j]@r to j; rank j sums the P-1 partials it receives into dKV[j]
// (one merge op). Partials are in the partial dtype (attention.partial_dtype;
// set it to the activation dtype for TE, whose dK/dV have K's dtype).
// Backward bytes received per rank: (P-1) * kv + (P-1) * dkv (dkv = the dK+dV
// accumulator bytes of c tokens); sent the same.
#pragma once

#include <string>

#include "sim/plan/plan.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

// by_work: ownership by attention work (work_balance.hpp) instead of contiguous/zigzag.
Plan make_allgather_kv_plan(const AttentionShape& shape, int ranks, bool by_work = false);

// The offset quotient (class_plan.hpp keep_class_programs) of the layout-owned plan: the
// programs of ranks 0..classes-1, peers named as full ranks. Rank r + K runs rank r's program
// shifted by K (the exchange lists its peers by offset r + t, its call reads KV[r - t] in
// that order), every K; the all-gather and reduce-scatter of all P ranks are then each
// representative's one comm group of P - 1 sends and P - 1 recvs, matched by offset.
// first_rank w > 0 (a multiple of classes; a work-block quotient of the causal mask): the
// programs are those of ranks w..w+classes-1 of the full plan relabelled r -> r - w
// (rotate_chunk_contents, chunk_layouts.hpp).
// std::invalid_argument for classes not dividing `ranks` or not below it, or such a w.
Plan make_allgather_kv_classes_plan(const AttentionShape& shape, int ranks, int classes,
                                    int first_rank = 0);

// Whether the plan runs its all-gather and reduce-scatter as NCCL's rings (plan.hpp
// CommStyle::nccl_ring): where every rank reads every KV chunk and adds to every chunk's dKV,
// the full and causal masks over the layout's chunks (zigzag under causal). A window,
// documents, or a causal mask over chunks dealt by work leave some pairs empty; there the plan
// keeps the grouped send/recv of only the chunks each rank reads (and the warning below).
bool allgather_kv_uses_nccl_ring(const AttentionShape& shape, bool by_work);

// What a run of `spec` on `shape` is told where its collectives are costed unlike NCCL's, empty
// otherwise: where the plan keeps grouped send/recv (above) and its group spans nodes with two
// or more ranks on a node. The grouped send/recv sends each KV chunk (and dKV partial) over
// the network once per receiving GPU of another node, NCCL's rings once per node: with g
// ranks of the group on each of n >= 2 nodes a NIC carries (n - 1) g c bytes here and about
// (n - 1) c in NCCL's ring, so the cross-node time is up to g times too high.
std::string allgather_kv_cost_warning(const ScheduleSpec& spec, const AttentionShape& shape);

}  // namespace tilesim
