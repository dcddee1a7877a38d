#include "sim/schedules/chunk_layouts.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "sim/schedules/schedule.hpp"
#include "sim/schedules/work_balance.hpp"

namespace tilesim {

Plan make_chunked_plan(std::string schedule, const AttentionShape& shape, int ranks,
                       ChunkOwnership ownership) {
  if (ranks < 1) throw ScheduleError("schedule.gpus", "expected at least 1 GPU");
  if (ownership == ChunkOwnership::work) {
    const WorkAssignment work = balanced_assignment(shape, ranks);
    Plan plan;
    plan.schedule = std::move(schedule);
    plan.ranks = ranks;
    plan.shape = shape;
    plan.layout.seq_len = shape.seq_len;
    plan.layout.blocks = ranks * work.blocks_per_rank;
    plan.programs.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      Chunk chunk;
      chunk.owner = r;
      chunk.tokens = shape.seq_len / ranks;
      chunk.blocks = work.rank_blocks[static_cast<std::size_t>(r)];
      plan.chunks.push_back(std::move(chunk));
    }
    return plan;
  }
  const int blocks = ownership == ChunkOwnership::zigzag ? 2 * ranks : ranks;
  if (shape.seq_len % blocks != 0) {
    throw ScheduleError(
        "attention.seq_len",
        fmt::format("seq_len {} is not divisible into {} {} blocks for {} GPUs", shape.seq_len,
                    blocks, ownership == ChunkOwnership::zigzag ? "zigzag" : "equal", ranks));
  }
  Plan plan;
  plan.schedule = std::move(schedule);
  plan.ranks = ranks;
  plan.shape = shape;
  plan.layout.kind =
      ownership == ChunkOwnership::striped ? LayoutKind::striped : LayoutKind::contiguous;
  plan.layout.seq_len = shape.seq_len;
  plan.layout.blocks = blocks;
  plan.programs.resize(static_cast<std::size_t>(ranks));
  const std::int64_t tokens = shape.seq_len / ranks;
  for (int r = 0; r < ranks; ++r) {
    Chunk chunk;
    chunk.owner = r;
    chunk.tokens = tokens;
    chunk.blocks = ownership == ChunkOwnership::zigzag ? std::vector<int>{r, 2 * ranks - 1 - r}
                                                       : std::vector<int>{r};
    plan.chunks.push_back(std::move(chunk));
  }
  return plan;
}

void rotate_chunk_contents(Plan& plan, int first_rank) {
  const int p = static_cast<int>(plan.chunks.size());
  if (first_rank == 0) return;
  if (first_rank < 0 || first_rank >= p || !plan.objects.empty() || plan.op_count() > 0) {
    throw std::invalid_argument(
        "rotate_chunk_contents: a first rank of the plan, before its objects and programs");
  }
  std::vector<Chunk> rotated(plan.chunks.size());
  for (int r = 0; r < p; ++r) {
    Chunk& chunk = rotated[static_cast<std::size_t>(r)];
    chunk = plan.chunks[static_cast<std::size_t>((r + first_rank) % p)];
    chunk.owner = plan.chunks[static_cast<std::size_t>(r)].owner;
  }
  plan.chunks = std::move(rotated);
}

}  // namespace tilesim
