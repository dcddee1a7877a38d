#include "sim/plan/output_correction.hpp"

#include <fmt/format.h>

#include <cstdint>
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

class Rewriter {
 public:
  explicit Rewriter(Plan& plan)
      : plan_(plan), holds_(plan.objects.size(), 0), held_inputs_(plan.ranks) {
    for (int id = 0; id < static_cast<int>(plan.objects.size()); ++id) {
      const DataObject& o = plan.object(id);
      // A quotient plan (symmetric simulation) holds objects homed on ranks it does not run.
      if (o.input && is_accumulator(o.tensor) && o.home_rank < plan.ranks) {
        held_inputs_[static_cast<std::size_t>(o.home_rank)].push_back(id);
      }
    }
  }

  void rank(int r) {
    const RankProgram old = std::move(plan_.programs[static_cast<std::size_t>(r)]);
    RankProgram& out = plan_.programs[static_cast<std::size_t>(r)];
    out = RankProgram{};
    for (int id : held_inputs_[static_cast<std::size_t>(r)]) mark(id, 1);
    std::vector<int> new_index(old.size(), -1);
    std::vector<int> after, writes, partials, targets;
    for (int i = 0; i < static_cast<int>(old.size()); ++i) {
      const Op& op = old.op(i);
      after.clear();
      for (int a : old.after(i)) after.push_back(new_index[static_cast<std::size_t>(a)]);
      switch (op.kind) {
        case OpKind::compute: {
          writes.clear();
          partials.clear();
          targets.clear();
          for (int w : old.writes(i)) {
            if (is_accumulator(plan_.object(w).tensor) && holds_[static_cast<std::size_t>(w)]) {
              const int part = partial(r, w);
              writes.push_back(part);
              partials.push_back(part);
              targets.push_back(w);
            } else {
              writes.push_back(w);
              mark(w, 1);
            }
          }
          new_index[static_cast<std::size_t>(i)] =
              out.add_compute(op, old.pairs(i), old.reads(i), writes, after);
          if (!partials.empty()) {
            Op merge;
            merge.kind = OpKind::merge;
            out.add(merge, partials, targets, {});
            Op drop;  // one free of all the call's partials (a free may name several objects)
            drop.kind = OpKind::free;
            out.add(drop, {}, partials, {});
          }
          break;
        }
        case OpKind::free:
          for (int w : old.writes(i)) mark(w, 0);
          new_index[static_cast<std::size_t>(i)] = out.add(op, old.reads(i), old.writes(i), after);
          break;
        default:  // recv and merge leave their writes held; send writes nothing
          for (int w : old.writes(i)) mark(w, 1);
          new_index[static_cast<std::size_t>(i)] = out.add(op, old.reads(i), old.writes(i), after);
          break;
      }
    }
    for (int obj : touched_) holds_[static_cast<std::size_t>(obj)] = 0;
    touched_.clear();
  }

 private:
  void mark(int obj, char value) {
    char& h = holds_[static_cast<std::size_t>(obj)];
    if (value && !h) touched_.push_back(obj);
    h = value;
  }

  int partial(int rank, int target) {
    const std::uint64_t key =
        (static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(target);
    auto it = partials_.find(key);
    if (it != partials_.end()) return it->second;
    const DataObject t = plan_.object(target);
    const int id = plan_.add_object({t.tensor, t.chunk, rank, block_partial_bytes(plan_, t), false,
                                     false, fmt::format("{}~{}", t.name, rank)});
    holds_.push_back(0);
    partials_.emplace(key, id);
    return id;
  }

  Plan& plan_;
  std::vector<char> holds_;  // per object: the rank being rewritten holds a copy with content
  std::vector<int> touched_;
  std::vector<std::vector<int>> held_inputs_;  // per rank: accumulators it starts with
  std::unordered_map<std::uint64_t, int> partials_;
};

}  // namespace

void separate_output_corrections(Plan& plan) {
  Rewriter rewriter(plan);
  for (int r = 0; r < plan.ranks; ++r) rewriter.rank(r);
}

}  // namespace tilesim
