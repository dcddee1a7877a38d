#include "sim/plan/output_correction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tilesim {

std::string_view to_string(Correction correction) {
  switch (correction) {
    case Correction::separate:
      return "separate";
    case Correction::eager:
      return "eager";
    default:
      return "fused";
  }
}

namespace {

// Bytes of the block a kernel call writes for accumulator `target`.
double block_partial_bytes(const Plan& plan, const DataObject& target) {
  const std::int64_t c = plan.chunks[static_cast<std::size_t>(target.chunk)].tokens;
  const auto groups = static_cast<double>(plan.head_groups);
  switch (target.tensor) {
    case Tensor::o:  // O has the v head dim, dQ the q/k one (attention_shape.hpp)
      return plan.shape.d_o_bytes(c) / groups;
    case Tensor::dq:
      return plan.shape.q_bytes(c) / groups;
    case Tensor::dkv:
      return plan.shape.kv_bytes(c) / groups;
    default:
      return plan.shape.lse_bytes(c) / groups;
  }
}

}  // namespace

OutputCorrectionRewriter::OutputCorrectionRewriter(Plan& plan)
    : plan_(plan),
      held_inputs_(static_cast<std::size_t>(plan.ranks)),
      ranks_(static_cast<std::size_t>(plan.ranks)) {
  for (int id = 0; id < static_cast<int>(plan.objects.size()); ++id) {
    const DataObject& o = plan.object(id);
    if (o.input && is_accumulator(o.tensor) && o.home_rank < plan.ranks) {
      held_inputs_[static_cast<std::size_t>(o.home_rank)].push_back(id);
    }
  }
}

OutputCorrectionRewriter::RankState& OutputCorrectionRewriter::state(int rank) {
  RankState& st = ranks_[static_cast<std::size_t>(rank)];
  if (!st.started) {
    st.started = true;
    st.holds.insert(held_inputs_[static_cast<std::size_t>(rank)].begin(),
                    held_inputs_[static_cast<std::size_t>(rank)].end());
  }
  return st;
}

void OutputCorrectionRewriter::forget(int rank) {
  RankState& st = ranks_[static_cast<std::size_t>(rank)];
  st = RankState{};
  st.started = true;  // a complete program is not rewritten again
}

void OutputCorrectionRewriter::discard_before(int rank, int raw_index) {
  RankState& st = state(rank);
  const int drop = std::min(raw_index - st.index_base, static_cast<int>(st.new_index.size()));
  if (drop <= 0) return;
  st.new_index.erase(st.new_index.begin(), st.new_index.begin() + drop);
  st.index_base += drop;
}

void OutputCorrectionRewriter::rewrite(int r, const RankProgram& old, int from, RankProgram& out) {
  RankState& st = state(r);
  auto mark = [&](int obj, bool held) {
    if (held) {
      st.holds.insert(obj);
    } else {
      st.holds.erase(obj);
    }
  };
  for (int i = from; i < static_cast<int>(old.size()); ++i) {
    const Op& op = old.op(i);
    after_.clear();
    for (int a : old.after(i)) {
      if (a < st.index_base) {
        throw std::logic_error("output correction: 'after' names a discarded raw op");
      }
      after_.push_back(st.new_index[static_cast<std::size_t>(a - st.index_base)]);
    }
    int rewritten = -1;
    switch (op.kind) {
      case OpKind::compute: {
        writes_.clear();
        partials_scratch_.clear();
        targets_.clear();
        for (int w : old.writes(i)) {
          if (is_accumulator(plan_.object(w).tensor) && st.holds.contains(w)) {
            const int part = partial(r, w);
            writes_.push_back(part);
            partials_scratch_.push_back(part);
            targets_.push_back(w);
          } else {
            writes_.push_back(w);
            mark(w, true);
          }
        }
        rewritten = out.add_compute(op, old.pairs(i), old.reads(i), writes_, after_);
        if (!partials_scratch_.empty()) {
          Op merge;
          merge.kind = OpKind::merge;
          out.add(merge, partials_scratch_, targets_, {});
          Op drop;  // one free of all the call's partials (a free may name several objects)
          drop.kind = OpKind::free;
          out.add(drop, {}, partials_scratch_, {});
        }
        break;
      }
      case OpKind::free:
        for (int w : old.writes(i)) mark(w, false);
        rewritten = out.add(op, old.reads(i), old.writes(i), after_);
        break;
      default:  // recv and merge leave their writes held; send writes nothing
        for (int w : old.writes(i)) mark(w, true);
        rewritten = out.add(op, old.reads(i), old.writes(i), after_);
        break;
    }
    if (i - st.index_base != static_cast<int>(st.new_index.size())) {
      throw std::logic_error("output correction: raw ops rewritten out of order");
    }
    st.new_index.push_back(rewritten);
  }
}

int OutputCorrectionRewriter::partial(int rank, int target) {
  RankState& st = ranks_[static_cast<std::size_t>(rank)];
  for (const auto& [t, id] : st.partial_of) {
    if (t == target) return id;
  }
  const int id = make_partial(rank, target);
  st.partial_of.emplace_back(target, id);
  return id;
}

int OutputCorrectionRewriter::make_partial(int rank, int target) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(target);
  auto it = partials_.find(key);
  if (it != partials_.end()) return it->second;
  const DataObject t = plan_.object(target);
  const int id = plan_.add_object({t.tensor, t.chunk, rank, block_partial_bytes(plan_, t), false,
                                   false, fmt::format("{}~{}", t.name, rank)});
  partials_.emplace(key, id);
  return id;
}

void separate_output_corrections(Plan& plan) {
  OutputCorrectionRewriter rewriter(plan);
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram old = std::move(plan.programs[static_cast<std::size_t>(r)]);
    plan.programs[static_cast<std::size_t>(r)] = RankProgram{};
    rewriter.rewrite(r, old, 0, plan.programs[static_cast<std::size_t>(r)]);
    rewriter.forget(r);
  }
}

}  // namespace tilesim
