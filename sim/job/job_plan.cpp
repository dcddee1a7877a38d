#include "sim/job/job_plan.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tilesim {
namespace {

void check_sizes(const Plan& group_plan, const JobLayout& layout) {
  if (group_plan.ranks != layout.cp()) {
    throw std::invalid_argument(
        fmt::format("a group plan of {} ranks in a job of CP {}", group_plan.ranks, layout.cp()));
  }
}

// The copy of one rank's program for group copy `offset` (ranks, chunks and objects shift).
RankProgram shifted(const RankProgram& program, int rank_offset, int chunk_offset,
                    int object_offset) {
  RankProgram out;
  std::vector<int> reads;
  std::vector<int> writes;
  std::vector<ChunkPair> pairs;
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    Op op = program.op(i);
    if (op.peer >= 0) op.peer += rank_offset;
    reads.assign(program.reads(i).begin(), program.reads(i).end());
    writes.assign(program.writes(i).begin(), program.writes(i).end());
    for (int& id : reads) id += object_offset;
    for (int& id : writes) id += object_offset;
    if (op.kind == OpKind::compute && op.pair_count > 0) {
      pairs.assign(program.pairs(i).begin(), program.pairs(i).end());
      for (ChunkPair& p : pairs) {
        p.q_chunk += chunk_offset;
        p.kv_chunk += chunk_offset;
      }
      out.add_compute(op, pairs, reads, writes, program.after(i));
    } else {
      out.add(op, reads, writes, program.after(i));
    }
  }
  return out;
}

}  // namespace

std::vector<int> group_placement(const Plan& group_plan, const JobLayout& layout, int group) {
  check_sizes(group_plan, layout);
  std::vector<int> gpus(static_cast<std::size_t>(group_plan.ranks));
  for (int r = 0; r < group_plan.ranks; ++r) {
    const int slot =
        group_plan.placement.empty() ? r : group_plan.placement[static_cast<std::size_t>(r)];
    gpus[static_cast<std::size_t>(r)] = layout.gpu_of(group, slot);
  }
  return gpus;
}

std::vector<int> job_placement(const Plan& group_plan, const JobLayout& layout) {
  std::vector<int> gpus;
  gpus.reserve(static_cast<std::size_t>(group_plan.ranks) *
               static_cast<std::size_t>(layout.cp_groups()));
  for (int g = 0; g < layout.cp_groups(); ++g) {
    for (int gpu : group_placement(group_plan, layout, g)) gpus.push_back(gpu);
  }
  return gpus;
}

Plan compose_job_plan(const Plan& group_plan, const JobLayout& layout, int groups) {
  check_sizes(group_plan, layout);
  if (groups > layout.cp_groups()) {
    throw std::invalid_argument(
        fmt::format("{} groups of a job of {} CP groups", groups, layout.cp_groups()));
  }
  if (groups < 0) groups = layout.cp_groups();
  const int ranks = group_plan.ranks;
  const int chunks = static_cast<int>(group_plan.chunks.size());
  const int objects = static_cast<int>(group_plan.objects.size());
  Plan job;
  job.schedule = group_plan.schedule;
  job.tile_a = group_plan.tile_a;
  job.tile_b = group_plan.tile_b;
  job.ranks = ranks * groups;
  job.head_groups = group_plan.head_groups;
  job.merge_form = group_plan.merge_form;
  job.comm_style = group_plan.comm_style;
  // Each group is a communicator of its own (ranks g P .. g P + P - 1).
  job.collective_ranks = group_plan.collective_ranks > 0 ? group_plan.collective_ranks : ranks;
  job.shape = group_plan.shape;
  job.layout = group_plan.layout;
  job.chunks.reserve(static_cast<std::size_t>(chunks) * static_cast<std::size_t>(groups));
  job.objects.reserve(static_cast<std::size_t>(objects) * static_cast<std::size_t>(groups));
  job.programs.reserve(static_cast<std::size_t>(job.ranks));
  job.placement.reserve(static_cast<std::size_t>(job.ranks));
  for (int g = 0; g < groups; ++g) {
    const int rank_offset = g * ranks;
    for (Chunk c : group_plan.chunks) {
      c.owner += rank_offset;
      job.chunks.push_back(std::move(c));
    }
    for (DataObject o : group_plan.objects) {
      o.chunk += g * chunks;
      o.home_rank += rank_offset;
      job.objects.push_back(std::move(o));
    }
    for (const RankProgram& program : group_plan.programs) {
      job.programs.push_back(shifted(program, rank_offset, g * chunks, g * objects));
    }
    for (int gpu : group_placement(group_plan, layout, g)) job.placement.push_back(gpu);
  }
  return job;
}

}  // namespace tilesim
