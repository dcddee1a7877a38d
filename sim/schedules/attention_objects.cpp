#include "sim/schedules/attention_objects.hpp"

#include <fmt/format.h>

namespace tilesim {

AttentionObjects add_attention_objects(Plan& plan) {
  AttentionObjects objs;
  const AttentionShape& shape = plan.shape;
  const bool fwd = shape.has_forward();
  const bool bwd = shape.has_backward();
  for (int i = 0; i < static_cast<int>(plan.chunks.size()); ++i) {
    const Chunk& chunk = plan.chunks[static_cast<std::size_t>(i)];
    const int owner = chunk.owner;
    const auto c = chunk.tokens;
    objs.q.push_back(plan.add_object(
        {Tensor::q, i, owner, shape.q_bytes(c), true, false, fmt::format("Q[{}]", i)}));
    objs.kv.push_back(plan.add_object(
        {Tensor::kv, i, owner, shape.kv_bytes(c), true, false, fmt::format("KV[{}]", i)}));
    objs.o.push_back(plan.add_object(
        {Tensor::o, i, owner, shape.o_accumulator_bytes(c), !fwd, fwd, fmt::format("O[{}]", i)}));
    objs.lse.push_back(plan.add_object(
        {Tensor::lse, i, owner, shape.lse_bytes(c), !fwd, fwd, fmt::format("LSE[{}]", i)}));
    if (!bwd) continue;
    objs.d_o.push_back(plan.add_object(
        {Tensor::d_o, i, owner, shape.d_o_bytes(c), true, false, fmt::format("dO[{}]", i)}));
    objs.dq.push_back(plan.add_object({Tensor::dq, i, owner, shape.dq_accumulator_bytes(c), false,
                                       true, fmt::format("dQ[{}]", i)}));
    objs.dkv.push_back(plan.add_object({Tensor::dkv, i, owner, shape.dkv_accumulator_bytes(c),
                                        false, true, fmt::format("dKV[{}]", i)}));
  }
  return objs;
}

}  // namespace tilesim
