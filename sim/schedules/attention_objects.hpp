// The data objects of the forward and backward passes for schedules whose
// chunks each live at one owner rank (ring, zigzag, striped, pass-Q,
// all-gather KV, double ring).
//
// Per chunk i of c tokens, at its owner (sizes from attention_shape.hpp):
//   forward:  Q[i] (q), KV[i] (kv) inputs; O[i] (o, fp32) and LSE[i] outputs.
//   backward: dO[i] (q) input; dQ[i] (o-sized fp32) and dKV[i] (dkv, fp32)
//             outputs. With a backward-only pass, Q, KV, O and LSE are the
//             forward's saved state and are inputs; with both passes O and LSE
//             are produced by the forward and read by the backward.
// D = rowsum(dO*O) is derived on the Q owner from dO and O by the backward
// block kernel, so it is not a plan object: Q-side tensors never travel in
// these schedules.
#pragma once

#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

struct AttentionObjects {
  // Object ids indexed by chunk; d_o, dq, dkv are empty without a backward pass.
  std::vector<int> q, kv, o, lse, d_o, dq, dkv;
};

AttentionObjects add_attention_objects(Plan& plan);

}  // namespace tilesim
