#include "sim/model/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/model/merge_cost.hpp"

namespace tilesim {

namespace {

// The run of `count` positions from the a-th position of `run` on.
PositionRun sub_run(const PositionRun& run, std::int64_t first, std::int64_t count) {
  return {run.start + first * run.stride, run.stride, count};
}

// The unmasked pairs of one CTA tile with a set of partner runs (kv runs of a q tile in the
// forward, q runs of a kv tile in the backward), sorted by start. Under the causal mask with
// unit strides and disjoint partners, the partners wholly on the visible side of the tile are a
// prefix or suffix of that order, counted from prefix sums of their lengths, and those wholly
// hidden count nothing, so only the few that straddle the tile are counted pair by pair: O(log n
// + straddling) a tile where the general sum is O(n). The sums are of whole numbers far below
// 2^53, so exact in any order: both paths give the same doubles.
class CausalTileWork {
 public:
  CausalTileWork(const AttentionMask& mask, std::span<const std::pair<int, PositionRun>> partners,
                 bool forward)
      : mask_(mask), partners_(partners), forward_(forward) {
    fast_ = mask.kind == AttentionMaskKind::causal;
    for (std::size_t i = 0; fast_ && i < partners.size(); ++i) {
      const PositionRun& run = partners[i].second;
      fast_ = run.stride == 1 &&
              (i == 0 || partners[i - 1].second.start + partners[i - 1].second.count <= run.start);
    }
    if (!fast_) return;
    tokens_before_.reserve(partners.size() + 1);
    tokens_before_.push_back(0);
    for (const auto& [id, run] : partners)
      tokens_before_.push_back(tokens_before_.back() + run.count);
  }

  double pairs_with(const PositionRun& tile) const {
    if (!fast_ || tile.stride != 1) {
      double w = 0.0;
      for (const auto& [id, run] : partners_) {
        w += forward_ ? mask_.pairs(tile, run) : mask_.pairs(run, tile);
      }
      return w;
    }
    const std::int64_t first = tile.start;
    const std::int64_t last = tile.start + tile.count - 1;
    const auto starts_after = [&](std::int64_t position) {  // first partner starting > position
      return static_cast<std::size_t>(
          std::upper_bound(partners_.begin(), partners_.end(), position,
                           [](std::int64_t p, const auto& x) { return p < x.second.start; }) -
          partners_.begin());
    };
    const auto ends_before = [&](std::int64_t position) {  // partners ending before position
      return static_cast<std::size_t>(
          std::partition_point(
              partners_.begin(), partners_.end(),
              [&](const auto& x) { return x.second.start + x.second.count <= position; }) -
          partners_.begin());
    };
    // Forward: kv partners ending at or before the tile's first query are wholly visible, those
    // starting after its last are hidden. Backward: q partners ending before the tile's first
    // key are hidden, those starting at or after its last key wholly visible.
    const std::size_t lo = forward_ ? ends_before(first + 1) : ends_before(first);
    const std::size_t hi = forward_ ? starts_after(last) : starts_after(last - 1);
    double w = 0.0;
    for (std::size_t i = lo; i < hi; ++i) {
      w += forward_ ? mask_.pairs(tile, partners_[i].second)
                    : mask_.pairs(partners_[i].second, tile);
    }
    const std::int64_t visible_tokens =
        forward_ ? tokens_before_[lo] : tokens_before_.back() - tokens_before_[hi];
    return w + static_cast<double>(visible_tokens) * static_cast<double>(tile.count);
  }

 private:
  const AttentionMask& mask_;
  std::span<const std::pair<int, PositionRun>> partners_;
  bool forward_;
  bool fast_ = false;
  std::vector<std::int64_t> tokens_before_;  // partners' tokens before index i
};

}  // namespace

std::vector<double> ComputeModel::tile_work(Pass pass, std::span<const ChunkPair> pairs,
                                            const std::vector<int>& tiled_chunks) const {
  const OccupancyModel& occupancy = profile_->occupancy;
  const AttentionMask& mask = plan_->shape.mask;
  if (!occupancy.enabled() || !mask.hides_future()) return {};
  const TokenLayout& layout = plan_->layout;
  const auto chunk = [&](int id) -> const Chunk& {
    return plan_->chunks[static_cast<std::size_t>(id)];
  };
  const bool forward = pass == Pass::fwd;
  // Each tiled chunk's partner blocks, gathered once: a fused call over a x b pairs would
  // otherwise scan all a b pairs for every one of its tiles.
  std::vector<std::pair<int, PositionRun>> partners;  // (tiled chunk, partner block's run)
  for (ChunkPair pair : pairs) {
    for (int other : chunk(forward ? pair.kv_chunk : pair.q_chunk).blocks) {
      partners.emplace_back(forward ? pair.q_chunk : pair.kv_chunk, layout.run(other));
    }
  }
  const auto by_tiled_then_start = [](const auto& x, const auto& y) {
    return std::pair{x.first, x.second.start} < std::pair{y.first, y.second.start};
  };
  std::sort(partners.begin(), partners.end(), by_tiled_then_start);
  std::vector<double> work;
  for (int id : tiled_chunks) {
    const auto [begin, end] =
        std::equal_range(partners.begin(), partners.end(), std::pair<int, PositionRun>{id, {}},
                         [](const auto& x, const auto& y) { return x.first < y.first; });
    const CausalTileWork partner_work(mask, std::span(begin, end), forward);
    for (int block : chunk(id).blocks) {
      const PositionRun run = layout.run(block);
      for (std::int64_t first = 0; first < run.count; first += occupancy.cta_tokens) {
        work.push_back(partner_work.pairs_with(
            sub_run(run, first, std::min<std::int64_t>(occupancy.cta_tokens, run.count - first))));
      }
    }
  }
  const auto [lo, hi] = std::minmax_element(work.begin(), work.end());
  if (work.empty() || *hi - *lo <= 1e-9 * *hi) return {};  // equal tiles: the closed form
  return work;
}

AttentionCall ComputeModel::call_of(Pass pass, std::span<const ChunkPair> pairs) const {
  // Distinct chunks: a fused op over a x b pairs is one call over a q chunks and b kv chunks.
  std::vector<int> q_chunks;
  std::vector<int> kv_chunks;
  q_chunks.reserve(pairs.size());
  kv_chunks.reserve(pairs.size());
  for (ChunkPair pair : pairs) {
    q_chunks.push_back(pair.q_chunk);
    kv_chunks.push_back(pair.kv_chunk);
  }
  // By position in the sequence (each chunk's first block), which is chunk id order in every
  // layout as generated: a plan whose chunks' tokens were rotated (chunk_layouts.hpp
  // rotate_chunk_contents) then lays its CTA tiles out in the order of the plan it relabels.
  const auto position = [&](int id) {
    const std::vector<int>& blocks = plan_->chunks[static_cast<std::size_t>(id)].blocks;
    return std::pair{blocks.empty() ? std::numeric_limits<int>::max() : blocks.front(), id};
  };
  const auto by_position = [&](std::vector<int>& ids) {
    std::sort(ids.begin(), ids.end(), [&](int x, int y) { return position(x) < position(y); });
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  };
  by_position(q_chunks);
  by_position(kv_chunks);
  const auto tokens = [&](const std::vector<int>& ids) {
    double sum = 0.0;
    for (int id : ids)
      sum += static_cast<double>(plan_->chunks[static_cast<std::size_t>(id)].tokens);
    return sum;
  };
  const AttentionShape& shape = plan_->shape;
  // The efficiency row is the q/k head dim's (nearest calibrated row); the v
  // head dim enters through the FLOPs (attention_shape.hpp).
  return {pass,
          shape.head_dim,
          tokens(q_chunks),
          tokens(kv_chunks),
          shape.heads / plan_->head_groups,
          shape.batch,
          tile_work(pass, pairs, pass == Pass::fwd ? q_chunks : kv_chunks)};
}

double ComputeModel::pair_time_s(Pass pass, ChunkPair pair, double e, int* cut_blocks) const {
  const Chunk& q = plan_->chunks[static_cast<std::size_t>(pair.q_chunk)];
  const Chunk& kv = plan_->chunks[static_cast<std::size_t>(pair.kv_chunk)];
  const double per_pair = (pass == Pass::fwd ? plan_->shape.flops_per_pair_forward()
                                             : plan_->shape.flops_per_pair_backward()) /
                          static_cast<double>(plan_->head_groups);
  const auto block = static_cast<double>(plan_->layout.block_tokens());
  double time_s = 0.0;
  for (int qb : q.blocks) {
    for (int kb : kv.blocks) {
      const double pairs = plan_->layout.unmasked_pairs(qb, kb, plan_->shape.mask);
      if (pairs <= 0) continue;
      const bool cut = pairs < block * block;
      if (cut && cut_blocks != nullptr) ++*cut_blocks;
      const double block_e = cut ? e * profile_->causal_factor(block, &log_) : e;
      time_s += pairs * per_pair / (profile_->peak_flops * block_e);
    }
  }
  return time_s;
}

double ComputeModel::uncached_compute_time_s(Pass pass, std::span<const ChunkPair> pairs,
                                             int* cut_blocks) const {
  const double e = efficiency(call_of(pass, pairs));
  double time_s = 0.0;
  for (ChunkPair pair : pairs) time_s += pair_time_s(pass, pair, e, cut_blocks);
  return time_s + profile_->launch_overhead_s;
}

std::size_t ComputeModel::BlocksHash::operator()(const std::vector<std::int64_t>& key) const {
  // A word at a time (a key is thousands of words; FNV-1a byte by byte took a fifth of a run).
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::int64_t value : key) {
    hash ^= static_cast<std::uint64_t>(value) + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  }
  return static_cast<std::size_t>(hash);
}

std::vector<std::int64_t> ComputeModel::memo_key(const RankProgram& program, int index) const {
  const std::span<const ChunkPair> pairs = program.pairs(index);
  std::vector<std::int64_t> key{static_cast<std::int64_t>(program.op(index).pass),
                                static_cast<std::int64_t>(pairs.size())};
  for (ChunkPair pair : pairs) {
    for (int id : {pair.q_chunk, pair.kv_chunk}) {
      const Chunk& chunk = plan_->chunks[static_cast<std::size_t>(id)];
      key.push_back(chunk.tokens);
      key.push_back(static_cast<std::int64_t>(chunk.blocks.size()));
      key.insert(key.end(), chunk.blocks.begin(), chunk.blocks.end());
    }
  }
  return key;
}

ComputeModel::CallTime ComputeModel::memoized_call(const RankProgram& program, int index) const {
  std::vector<std::int64_t> key = memo_key(program, index);
  if (const auto found = call_time_memo_.find(key); found != call_time_memo_.end()) {
    const auto block = static_cast<double>(plan_->layout.block_tokens());
    for (int i = 0; i < found->second.cut_blocks; ++i) profile_->causal_factor(block, &log_);
    return found->second;
  }
  const Pass pass = program.op(index).pass;
  const std::span<const ChunkPair> pairs = program.pairs(index);
  CallTime entry;
  entry.time_s = uncached_compute_time_s(pass, pairs, &entry.cut_blocks);
  entry.flops = plan_->compute_flops(pass, pairs);
  if (call_time_memo_words_ + key.size() > kCallMemoWords) {
    call_time_memo_.clear();
    call_time_memo_words_ = 0;
  }
  call_time_memo_words_ += key.size();
  call_time_memo_.emplace(std::move(key), entry);
  return entry;
}

double ComputeModel::compute_time_s(const RankProgram& program, int index) const {
  if (plan_->head_groups <= 1) {
    return uncached_compute_time_s(program.op(index).pass, program.pairs(index), nullptr);
  }
  return memoized_call(program, index).time_s;
}

ComputeModel::StreamCost ComputeModel::stream_cost(const RankProgram& program, int index) const {
  const Op& op = program.op(index);
  if (op.kind != OpKind::compute) return {duration_ps(program, index), 0.0};
  if (plan_->head_groups <= 1) {
    return {s_to_ps(uncached_compute_time_s(op.pass, program.pairs(index), nullptr)),
            plan_->compute_flops(op.pass, program.pairs(index))};
  }
  const CallTime call = memoized_call(program, index);
  return {s_to_ps(call.time_s), call.flops};
}

double ComputeModel::efficiency(const AttentionCall& call) const {
  CallKey key{call.pass,  call.head_dim, call.q_tokens, call.kv_tokens,
              call.heads, call.batch,    call.tile_work};
  const auto found = efficiency_memo_.find(key);
  if (found != efficiency_memo_.end()) return found->second;
  const double e = profile_->call_efficiency(call, &log_);
  efficiency_memo_.emplace(std::move(key), e);
  return e;
}

Picoseconds ComputeModel::duration_ps(const RankProgram& program, int index) const {
  const Op& op = program.op(index);
  if (op.kind == OpKind::compute) return s_to_ps(compute_time_s(program, index));
  if (op.kind == OpKind::merge) {
    const MergeCost cost = merge_cost(*plan_, program.reads(index), program.writes(index));
    // A collective's reduction runs inside its NCCL kernel: no launch of its own.
    const double launches = plan_->comm_style == CommStyle::nccl_ring ? 0.0 : cost.launches;
    return s_to_ps(cost.bytes / profile_->merge_bytes_per_s +
                   launches * profile_->launch_overhead_s);
  }
  return 0;
}

Picoseconds ComputeModel::compute_stream_ps(const RankProgram& program) const {
  Picoseconds total_ps = 0;
  for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
    total_ps += duration_ps(program, i);  // 0 for sends, recvs and frees
  }
  return total_ps;
}

std::vector<double> ComputeModel::whole_sequence_tile_work(Pass pass) const {
  const OccupancyModel& occupancy = profile_->occupancy;
  const AttentionMask& mask = plan_->shape.mask;
  if (!occupancy.enabled() || !mask.hides_future()) return {};
  const PositionRun all{0, 1, plan_->shape.seq_len};
  std::vector<double> work;
  for (std::int64_t first = 0; first < all.count; first += occupancy.cta_tokens) {
    const PositionRun tile =
        sub_run(all, first, std::min<std::int64_t>(occupancy.cta_tokens, all.count - first));
    work.push_back(pass == Pass::fwd ? mask.pairs(tile, all) : mask.pairs(all, tile));
  }
  return work;
}

double ComputeModel::single_gpu_time_s() const {
  // The whole sequence as one block per pass, costed by the mask's unmasked pairs.
  const auto s = static_cast<double>(plan_->shape.seq_len);
  const PositionRun all{0, 1, plan_->shape.seq_len};
  const double pairs = plan_->shape.mask.pairs(all, all);
  double total = 0.0;
  for (Pass pass : {Pass::fwd, Pass::bwd}) {
    if (pass == Pass::fwd ? !plan_->shape.has_forward() : !plan_->shape.has_backward()) continue;
    const AttentionShape& shape = plan_->shape;
    AttentionCall call{pass, shape.head_dim, s, s, shape.heads, shape.batch, {}};
    call.tile_work = whole_sequence_tile_work(pass);
    double e = profile_->call_efficiency(call, &single_gpu_log_);
    if (shape.causal) e *= profile_->causal_factor(s, &single_gpu_log_);
    const double per_pair = pass == Pass::fwd ? plan_->shape.flops_per_pair_forward()
                                              : plan_->shape.flops_per_pair_backward();
    total += pairs * per_pair / (profile_->peak_flops * e) + profile_->launch_overhead_s;
  }
  return total;
}

std::vector<std::string> ComputeModel::warnings() const {
  std::vector<std::string> out = log_.warnings(profile_->source);
  for (std::string& line : single_gpu_log_.warnings(profile_->source + " (one-GPU reference)")) {
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace tilesim
