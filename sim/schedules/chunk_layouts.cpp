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

void rotate_chunk_contents(Plan& plan, int chunk_shift) {
  const int count = static_cast<int>(plan.chunks.size());
  if (chunk_shift == 0) return;
  if (chunk_shift < 0 || chunk_shift >= count) {
    throw std::invalid_argument("rotate_chunk_contents: a shift below the plan's chunks");
  }
  std::vector<int> source(plan.chunks.size());
  for (int c = 0; c < count; ++c) source[static_cast<std::size_t>(c)] = (c + chunk_shift) % count;
  permute_chunk_contents(plan, source);
}

void permute_chunk_contents(Plan& plan, const std::vector<int>& source) {
  const std::size_t count = plan.chunks.size();
  std::vector<char> taken(count, 0);
  bool permutation = source.size() == count;
  for (std::size_t c = 0; permutation && c < count; ++c) {
    const int from = source[c];
    permutation = from >= 0 && static_cast<std::size_t>(from) < count &&
                  !taken[static_cast<std::size_t>(from)];
    if (permutation) taken[static_cast<std::size_t>(from)] = 1;
  }
  if (!permutation || !plan.objects.empty() || plan.op_count() > 0) {
    throw std::invalid_argument(
        "permute_chunk_contents: a permutation of the plan's chunks, before its objects and "
        "programs");
  }
  std::vector<Chunk> permuted(count);
  for (std::size_t c = 0; c < count; ++c) {
    Chunk& chunk = permuted[c];
    chunk = plan.chunks[static_cast<std::size_t>(source[c])];
    chunk.owner = plan.chunks[c].owner;
    chunk.head_group = plan.chunks[c].head_group;
  }
  plan.chunks = std::move(permuted);
}

}  // namespace tilesim
