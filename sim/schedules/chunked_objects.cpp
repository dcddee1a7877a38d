#include "sim/schedules/chunked_objects.hpp"

#include <fmt/format.h>

#include "sim/schedules/schedule.hpp"

namespace tilesim {

Plan make_contiguous_plan(std::string schedule, const AttentionShape& shape, int ranks) {
  if (ranks < 1) throw ScheduleError("schedule.gpus", "expected at least 1 GPU");
  if (shape.seq_len % ranks != 0) {
    throw ScheduleError("attention.seq_len", fmt::format("seq_len {} is not divisible by {} GPUs",
                                                         shape.seq_len, ranks));
  }
  Plan plan;
  plan.schedule = std::move(schedule);
  plan.ranks = ranks;
  plan.shape = shape;
  plan.layout.kind = LayoutKind::contiguous;
  plan.layout.seq_len = shape.seq_len;
  plan.layout.blocks = ranks;
  plan.programs.resize(static_cast<std::size_t>(ranks));
  for (int i = 0; i < ranks; ++i) {
    plan.chunks.push_back(Chunk{{i}, i, shape.seq_len / ranks});
  }
  return plan;
}

ChunkObjects add_forward_objects(Plan& plan) {
  ChunkObjects objs;
  for (int i = 0; i < static_cast<int>(plan.chunks.size()); ++i) {
    const Chunk& chunk = plan.chunks[static_cast<std::size_t>(i)];
    const int owner = chunk.owner;
    const auto c = chunk.tokens;
    objs.q.push_back(plan.add_object(
        {Tensor::q, i, owner, plan.shape.q_bytes(c), true, false, fmt::format("Q[{}]", i)}));
    objs.kv.push_back(plan.add_object(
        {Tensor::kv, i, owner, plan.shape.kv_bytes(c), true, false, fmt::format("KV[{}]", i)}));
    objs.o.push_back(plan.add_object({Tensor::o, i, owner, plan.shape.o_accumulator_bytes(c), false,
                                      true, fmt::format("O[{}]", i)}));
    objs.lse.push_back(plan.add_object(
        {Tensor::lse, i, owner, plan.shape.lse_bytes(c), false, true, fmt::format("LSE[{}]", i)}));
  }
  return objs;
}

}  // namespace tilesim
