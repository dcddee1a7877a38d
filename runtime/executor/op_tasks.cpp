#include "runtime/executor/op_tasks.hpp"

#include <algorithm>

#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/rank_failure.hpp"

namespace tilesim::runtime {
namespace {

int find_object(const Plan& plan, std::span<const int> objects, Tensor tensor, int chunk) {
  for (int obj : objects) {
    const DataObject& o = plan.object(obj);
    if (o.tensor == tensor && o.chunk == chunk) return obj;
  }
  return -1;
}

// Whether two accumulators cover the same tokens and heads: the same chunk, or (replicated KV
// heads, usp_schedule.hpp) chunks of the same blocks whose objects hold the same KV heads.
bool same_rows(const Plan& plan, const DataObject& a, const DataObject& b) {
  if (a.chunk == b.chunk) return true;
  if (a.tensor != Tensor::dkv) return false;
  const Chunk& ca = plan.chunks.at(static_cast<std::size_t>(a.chunk));
  const Chunk& cb = plan.chunks.at(static_cast<std::size_t>(b.chunk));
  const HeadRange ha = head_range(plan, a.chunk);
  const HeadRange hb = head_range(plan, b.chunk);
  return ca.blocks == cb.blocks && ha.kv_begin == hb.kv_begin && ha.kv_count == hb.kv_count;
}

}  // namespace

ComputeTask compute_task(const Plan& plan, int rank, int op) {
  const RankProgram& program = plan.programs.at(static_cast<std::size_t>(rank));
  const Op& o = program.op(op);
  const auto reads = program.reads(op);
  const auto writes = program.writes(op);
  ComputeTask task;
  task.op = op;
  task.pass = o.pass;
  for (ChunkPair bp : program.pairs(op)) {
    ComputePair pair;
    pair.q_chunk = bp.q_chunk;
    pair.kv_chunk = bp.kv_chunk;
    pair.q = find_object(plan, reads, Tensor::q, bp.q_chunk);
    pair.kv = find_object(plan, reads, Tensor::kv, bp.kv_chunk);
    if (o.pass == Pass::fwd) {
      pair.o = find_object(plan, writes, Tensor::o, bp.q_chunk);
      pair.lse = find_object(plan, writes, Tensor::lse, bp.q_chunk);
      if (pair.q < 0 || pair.kv < 0 || pair.o < 0 || pair.lse < 0) {
        throw RankFailure(rank, op,
                          "a forward compute must read Q and KV and write O and LSE of each of "
                          "its chunk pairs");
      }
    } else {
      pair.o = find_object(plan, reads, Tensor::o, bp.q_chunk);
      pair.lse = find_object(plan, reads, Tensor::lse, bp.q_chunk);
      pair.d_o = find_object(plan, reads, Tensor::d_o, bp.q_chunk);
      pair.dq = find_object(plan, writes, Tensor::dq, bp.q_chunk);
      pair.dkv = find_object(plan, writes, Tensor::dkv, bp.kv_chunk);
      const int needed[] = {pair.q, pair.kv, pair.o, pair.lse, pair.d_o, pair.dq, pair.dkv};
      if (std::any_of(std::begin(needed), std::end(needed), [](int obj) { return obj < 0; })) {
        throw RankFailure(rank, op,
                          "a backward compute must read Q, KV, dO, O and LSE and write dQ and "
                          "dKV of each of its chunk pairs");
      }
    }
    task.pairs.push_back(pair);
  }
  return task;
}

MergeTask merge_task(const Plan& plan, int rank, int op) {
  const RankProgram& program = plan.programs.at(static_cast<std::size_t>(rank));
  const auto reads = program.reads(op);
  const auto writes = program.writes(op);
  MergeTask task;
  task.op = op;
  std::size_t used_reads = 0;
  for (int target : writes) {
    const DataObject& t = plan.object(target);
    if (t.tensor == Tensor::dq || t.tensor == Tensor::dkv) {
      SumMerge sum;
      sum.target = target;
      for (int r : reads) {
        const DataObject& part = plan.object(r);
        if (r != target && part.tensor == t.tensor && same_rows(plan, part, t))
          sum.addends.push_back(r);
      }
      if (sum.addends.empty()) {
        throw RankFailure(rank, op, "a dQ/dKV merge must read partials of each target's chunk");
      }
      used_reads += sum.addends.size();
      task.sums.push_back(std::move(sum));
    } else if (t.tensor == Tensor::o) {
      SoftmaxMerge merge;
      merge.target = {target, find_object(plan, writes, Tensor::lse, t.chunk)};
      for (int r : reads) {
        const DataObject& po = plan.object(r);
        if (po.tensor != Tensor::o || po.chunk != t.chunk || r == target) continue;
        int lse = -1;
        for (int l : reads) {
          const DataObject& pl = plan.object(l);
          if (pl.tensor == Tensor::lse && pl.chunk == po.chunk && pl.home_rank == po.home_rank) {
            lse = l;
          }
        }
        merge.partials.push_back({r, lse});
      }
      const bool paired = std::all_of(merge.partials.begin(), merge.partials.end(),
                                      [](const PartialPair& p) { return p.lse >= 0; });
      if (merge.target.lse < 0 || merge.partials.empty() || !paired) {
        throw RankFailure(
            rank, op, "a merge must read O/LSE partial pairs and write each target's O and LSE");
      }
      used_reads += 2 * merge.partials.size();
      task.softmax.push_back(std::move(merge));
    } else if (t.tensor != Tensor::lse) {
      throw RankFailure(rank, op, "a merge writes only O/LSE, dQ or dKV accumulators");
    }
  }
  if (used_reads != reads.size() || (task.softmax.empty() && task.sums.empty())) {
    throw RankFailure(rank, op, "a merge must read only partials of the accumulators it writes");
  }
  return task;
}

}  // namespace tilesim::runtime
