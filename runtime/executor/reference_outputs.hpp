// Reference results of the whole sequence for a run's inputs: what every final output object of
// a plan must hold, and what a backward-only plan's saved forward state (O, LSE) is.
//
// Model: attention over all S tokens and all heads, in double precision with the plain-loop
// kernels of kernels/cpu/reference_attention.hpp, on exactly the values InputData generates
// (so rounded inputs are seen alike by the backend and the reference). Per layout block
// (sim/plan/token_layout.hpp; a block's token t sits at position start + t * stride):
//   forward(block): the block's queries against every key, causal by absolute positions:
//                   O [batch][c][H][d], LSE [batch][H][c];
//   dq(block):      backward of the block's queries against every key, with the block's final
//                   O, LSE and dO: dQ [batch][c][H][d];
//   dkv(block):     the block's dK then dV [batch][c][Hkv][d], summed over every query block
//                   (FlashAttention-2 form: each pair uses its query rows' final O and LSE).
// Results are cached per block. Cost: forward and dq of a block are c x S pairs; the first
// dkv needs the forward of every block (S x S pairs).
// object_values(object) is the reference of one O, LSE, dQ or dKV object in the runtime's
// layout (runtime/object_layout.hpp: the chunk's blocks in order, the head group's heads).
#pragma once

#include <map>
#include <vector>

#include "runtime/executor/input_data.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct ReferenceRows {
  std::vector<double> o;    // [batch][c][heads][head_dim]
  std::vector<double> lse;  // [batch][heads][c]
};

class ReferenceOutputs {
 public:
  ReferenceOutputs(const Plan& plan, const InputData& inputs);

  const ReferenceRows& forward(int block);
  const std::vector<double>& dq(int block);
  const std::vector<double>& dkv(int block);

  // Throws std::invalid_argument for a tensor other than o, lse, dq, dkv.
  std::vector<double> object_values(int object);

 private:
  const std::vector<double>& full_kv(int part);
  std::vector<double> kv_block(int part, int block);

  const Plan& plan_;
  const InputData& inputs_;
  std::vector<double> k_, v_;  // whole sequence, [batch][S][kv_heads][head_dim]; empty = not yet
  std::map<int, ReferenceRows> forward_;
  std::map<int, std::vector<double>> dq_;
  std::map<int, std::vector<double>> dkv_;
};

}  // namespace tilesim::runtime
