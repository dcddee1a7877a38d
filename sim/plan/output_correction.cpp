#include "sim/plan/output_correction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
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
  const int objects = static_cast<int>(plan.objects.size());
  partial_of_.assign(static_cast<std::size_t>(objects), -1);
  for (int id = 0; id < objects; ++id) {
    const DataObject o = plan.object(id);  // a copy: add_object may move the objects
    if (!is_accumulator(o.tensor)) continue;
    if (o.input && o.home_rank < plan.ranks) {
      held_inputs_[static_cast<std::size_t>(o.home_rank)].push_back(id);
    }
    // Homed on the chunk's owner, so that O's and LSE's partials of a chunk share a home (the
    // runtime pairs a merge's O and LSE partials by chunk and home), even where O and LSE do not
    // (USP: O at the token owner, LSE at the head rank).
    const int home = plan.chunks[static_cast<std::size_t>(o.chunk)].owner;
    partial_of_[static_cast<std::size_t>(id)] = plan.add_object(
        {o.tensor, o.chunk, home, block_partial_bytes(plan, o), false, false, o.name + "~"});
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
            const int part = partial(w);
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

int OutputCorrectionRewriter::partial(int target) const {
  const int id = target < static_cast<int>(partial_of_.size())
                     ? partial_of_[static_cast<std::size_t>(target)]
                     : -1;
  if (id < 0) {
    throw std::logic_error(
        fmt::format("output correction: {} has no block partial (an accumulator made after the "
                    "rewriter)",
                    plan_.object(target).name));
  }
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
