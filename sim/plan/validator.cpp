#include "sim/plan/validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>

#include "sim/plan/plan_structure.hpp"

namespace tilesim {
namespace {

constexpr std::size_t kMaxErrors = 20;

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The set of block pairs an accumulator holds, as a count and a hash sum.
struct Contribution {
  std::int64_t count = 0;
  std::uint64_t hash = 0;
  void add(const Contribution& other) {
    count += other.count;
    hash += other.hash;
  }
  bool operator==(const Contribution&) const = default;
};

// Contributions held by each copy of an accumulator. A partial lives on its
// home rank and usually on one more (the rank it is reduced into), so two
// inline slots per object serve almost every access; other copies go to a map.
class HeldContributions {
 public:
  explicit HeldContributions(const Plan& plan) : slots_(plan.objects.size()) {}

  Contribution& at(int rank, int object) {
    Slots& s = slots_[static_cast<std::size_t>(object)];
    for (Slot& slot : s) {
      if (slot.rank == rank) return slot.held;
    }
    for (Slot& slot : s) {
      if (slot.rank < 0) {
        slot.rank = rank;
        return slot.held;
      }
    }
    return overflow_[(static_cast<std::uint64_t>(rank) << 32) | static_cast<std::uint32_t>(object)];
  }

 private:
  struct Slot {
    int rank = -1;
    Contribution held;
  };
  using Slots = std::array<Slot, 2>;
  std::vector<Slots> slots_;
  std::unordered_map<std::uint64_t, Contribution> overflow_;
};

class Validator {
 public:
  explicit Validator(const Plan& plan) : plan_(plan) {
    report_.ranks.resize(static_cast<std::size_t>(plan.ranks));
    // Compact copies of what the hot loops read per object reference (a DataObject with
    // its name spans cache lines; millions of references would each miss).
    tensor_.reserve(plan.objects.size());
    chunk_.reserve(plan.objects.size());
    for (const DataObject& o : plan.objects) {
      tensor_.push_back(o.tensor);
      chunk_.push_back(o.chunk);
    }
  }

  PlanReport run() {
    if (!check_structure()) return std::move(report_);
    check_coverage();
    check_availability();
    dry_run();
    return std::move(report_);
  }

 private:
  void error(const std::string& message) {
    if (report_.errors.size() < kMaxErrors) report_.errors.push_back(message);
  }

  bool valid_object(int id) const { return id >= 0 && id < static_cast<int>(plan_.objects.size()); }

  bool check_structure() {
    if (static_cast<int>(plan_.programs.size()) != plan_.ranks) {
      error(fmt::format("plan has {} programs for {} ranks", plan_.programs.size(), plan_.ranks));
      return false;
    }
    const int chunks = static_cast<int>(plan_.chunks.size());
    if (plan_.shape.causal != plan_.shape.mask.hides_future()) {
      error(fmt::format("shape says causal = {} but its mask is {}", plan_.shape.causal,
                        to_string(plan_.shape.mask.kind)));
      return false;
    }
    if (plan_.head_groups < 1) {
      error(fmt::format("plan has {} head groups", plan_.head_groups));
      return false;
    }
    for (int c = 0; c < chunks; ++c) {
      const int h = head_group(c);
      if (h < 0 || h >= plan_.head_groups) {
        error(
            fmt::format("chunk {} names head group {} outside 0..{}", c, h, plan_.head_groups - 1));
        return false;
      }
    }
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        for (int obj : program.reads(i)) {
          if (!valid_object(obj))
            error(fmt::format("{}: unknown object {}", plan_.describe({r, i}), obj));
        }
        for (int obj : program.writes(i)) {
          if (!valid_object(obj))
            error(fmt::format("{}: unknown object {}", plan_.describe({r, i}), obj));
        }
        if (op.kind == OpKind::compute) check_compute_structure(r, i);
        const bool comm = op.kind == OpKind::send || op.kind == OpKind::recv;
        const bool send_shape = program.reads(i).size() == 1 && program.writes(i).empty();
        const bool recv_shape = program.reads(i).empty() && program.writes(i).size() == 1;
        if (comm && !(op.kind == OpKind::send ? send_shape : recv_shape)) {
          error(
              fmt::format("{}: a send or recv carries exactly one object", plan_.describe({r, i})));
        }
      }
    }
    return report_.ok();
  }

  // A compute's pairs name valid chunks of one head group, and the op reads and
  // writes the objects of each pair's chunks (the runtime finds them that way).
  void check_compute_structure(int r, int i) {
    const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
    const int chunks = static_cast<int>(plan_.chunks.size());
    const auto pairs = program.pairs(i);
    if (pairs.empty()) {
      error(fmt::format("rank {} op {}: compute has no block pairs", r, i));
      return;
    }
    for (ChunkPair bp : pairs) {
      if (bp.q_chunk < 0 || bp.q_chunk >= chunks || bp.kv_chunk < 0 || bp.kv_chunk >= chunks) {
        error(fmt::format("rank {} op {}: compute names a chunk outside 0..{}", r, i, chunks - 1));
        return;
      }
      if (head_group(bp.q_chunk) != head_group(bp.kv_chunk)) {
        error(fmt::format("{}: q chunk is in head group {} and kv chunk in head group {}",
                          plan_.describe({r, i}), head_group(bp.q_chunk), head_group(bp.kv_chunk)));
        return;
      }
    }
    // (chunk, tensor) keys of the op's objects, sorted for lookups per pair.
    auto keys_of = [&](std::span<const int> objs) {
      std::vector<std::int64_t> keys;
      keys.reserve(objs.size());
      for (int obj : objs) {
        if (!valid_object(obj)) continue;
        keys.push_back(static_cast<std::int64_t>(chunk_of(obj)) * kTensorKinds +
                       static_cast<int>(tensor_of(obj)));
      }
      std::sort(keys.begin(), keys.end());
      return keys;
    };
    const std::vector<std::int64_t> reads = keys_of(program.reads(i));
    const std::vector<std::int64_t> writes = keys_of(program.writes(i));
    auto has = [](const std::vector<std::int64_t>& keys, int chunk, Tensor t) {
      return std::binary_search(
          keys.begin(), keys.end(),
          static_cast<std::int64_t>(chunk) * kTensorKinds + static_cast<int>(t));
    };
    const bool fwd = program.op(i).pass == Pass::fwd;
    for (ChunkPair bp : pairs) {
      std::string missing;
      auto need = [&](const std::vector<std::int64_t>& keys, int chunk, Tensor t, bool read) {
        if (!has(keys, chunk, t)) {
          missing += fmt::format(" {} {}[{}]", read ? "reads" : "writes", to_string(t), chunk);
        }
      };
      need(reads, bp.q_chunk, Tensor::q, true);
      need(reads, bp.kv_chunk, Tensor::kv, true);
      if (fwd) {
        need(writes, bp.q_chunk, Tensor::o, false);
        need(writes, bp.q_chunk, Tensor::lse, false);
      } else {
        need(reads, bp.q_chunk, Tensor::d_o, true);
        need(reads, bp.q_chunk, Tensor::o, true);
        need(reads, bp.q_chunk, Tensor::lse, true);
        need(writes, bp.q_chunk, Tensor::dq, false);
        need(writes, bp.kv_chunk, Tensor::dkv, false);
      }
      if (!missing.empty()) {
        error(fmt::format("{}: block pair {}x{} needs an op that{}", plan_.describe({r, i}),
                          bp.q_chunk, bp.kv_chunk, missing));
        return;
      }
    }
  }

  int head_group(int chunk) const {
    return plan_.chunks[static_cast<std::size_t>(chunk)].head_group;
  }

  std::size_t pair_index(int group, int q_block, int kv_block) const {
    const auto blocks = static_cast<std::size_t>(plan_.layout.blocks);
    return (static_cast<std::size_t>(group) * blocks + static_cast<std::size_t>(q_block)) * blocks +
           static_cast<std::size_t>(kv_block);
  }

  void check_coverage() {
    const auto blocks = static_cast<std::size_t>(plan_.layout.blocks);
    const auto groups = static_cast<std::size_t>(plan_.head_groups);
    // One byte per (pass, head group, q block, kv block); the first op of a duplicate is
    // found again by a rescan, which only an invalid plan pays.
    std::vector<std::uint8_t> done[2];
    const bool pass_used[2] = {plan_.shape.has_forward(), plan_.shape.has_backward()};
    for (int p = 0; p < 2; ++p) {
      if (pass_used[p]) done[p].assign(groups * blocks * blocks, 0);
    }
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      auto& stats = report_.ranks[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        if (op.kind != OpKind::compute) continue;
        const int p = op.pass == Pass::fwd ? 0 : 1;
        stats.compute_flops += plan_.compute_flops({r, i});
        stats.computes += static_cast<int>(program.pairs(i).size());
        if (!pass_used[p]) {
          error(fmt::format("{}: the scenario has no {} pass", plan_.describe({r, i}),
                            to_string(op.pass)));
          continue;
        }
        for (ChunkPair bp : program.pairs(i)) {
          bool any_unmasked = false;
          const int h = head_group(bp.q_chunk);
          for (int qb : plan_.chunks[static_cast<std::size_t>(bp.q_chunk)].blocks) {
            for (int kb : plan_.chunks[static_cast<std::size_t>(bp.kv_chunk)].blocks) {
              if (plan_.layout.mask(qb, kb, plan_.shape.mask) == BlockPairMask::skip) continue;
              any_unmasked = true;
              const std::size_t k = pair_index(h, qb, kb);
              if (done[p][k] == 1) {
                error(fmt::format("duplicated block (q {}, kv {}{}) {}: computed by {} and by {}",
                                  qb, kb, group_suffix(h), to_string(op.pass),
                                  plan_.describe(first_computing(op.pass, h, qb, kb)),
                                  plan_.describe({r, i})));
              }
              if (done[p][k] < 2) ++done[p][k];
            }
          }
          if (!any_unmasked) {
            error(fmt::format("{}: every token pair of chunk pair {}x{} is masked",
                              plan_.describe({r, i}), bp.q_chunk, bp.kv_chunk));
          }
        }
      }
    }
    for (int p = 0; p < 2; ++p) {
      if (!pass_used[p]) continue;
      for (int h = 0; h < plan_.head_groups; ++h) {
        for (int qb = 0; qb < plan_.layout.blocks; ++qb) {
          for (int kb = 0; kb < plan_.layout.blocks; ++kb) {
            if (plan_.layout.mask(qb, kb, plan_.shape.mask) == BlockPairMask::skip) continue;
            if (done[p][pair_index(h, qb, kb)] == 0) {
              error(fmt::format("missing block (q {}, kv {}{}) {}: no rank computes it", qb, kb,
                                group_suffix(h), p == 0 ? "fwd" : "bwd"));
            }
          }
        }
      }
    }
  }

  // The first op in (rank, index) order that computes token block pair (qb, kb) of head group h.
  OpId first_computing(Pass pass, int h, int qb, int kb) const {
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        if (op.kind != OpKind::compute || op.pass != pass) continue;
        for (ChunkPair bp : program.pairs(i)) {
          if (head_group(bp.q_chunk) != h) continue;
          const auto& qs = plan_.chunks[static_cast<std::size_t>(bp.q_chunk)].blocks;
          const auto& ks = plan_.chunks[static_cast<std::size_t>(bp.kv_chunk)].blocks;
          if (std::find(qs.begin(), qs.end(), qb) != qs.end() &&
              std::find(ks.begin(), ks.end(), kb) != ks.end()) {
            return {r, i};
          }
        }
      }
    }
    return {-1, -1};
  }

  // ", head group h" when heads are split, so single-group messages stay as they were.
  std::string group_suffix(int h) const {
    return plan_.head_groups > 1 ? fmt::format(", head group {}", h) : std::string();
  }

  void check_availability() {
    // Inputs by home rank, and one presence flag per object reset between ranks,
    // so the check is linear in objects plus references.
    std::vector<std::vector<int>> inputs(static_cast<std::size_t>(plan_.ranks));
    for (int id = 0; id < static_cast<int>(plan_.objects.size()); ++id) {
      const DataObject& obj = plan_.object(id);
      if (obj.input && obj.home_rank >= 0 && obj.home_rank < plan_.ranks) {
        inputs[static_cast<std::size_t>(obj.home_rank)].push_back(id);
      }
    }
    std::vector<std::uint8_t> present(plan_.objects.size(), 0);
    std::vector<int> touched;
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      auto& stats = report_.ranks[static_cast<std::size_t>(r)];
      for (int obj : touched) present[static_cast<std::size_t>(obj)] = 0;
      touched = inputs[static_cast<std::size_t>(r)];
      for (int obj : touched) present[static_cast<std::size_t>(obj)] = 1;
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        for (int obj : program.reads(i)) {
          if (present[static_cast<std::size_t>(obj)] == 0) {
            error(fmt::format("{}: reads {} before it is on rank {}", plan_.describe({r, i}),
                              plan_.object(obj).name, r));
          }
        }
        if (op.kind == OpKind::free) {
          for (int obj : program.writes(i)) {
            if (present[static_cast<std::size_t>(obj)] == 0) {
              error(fmt::format("{}: frees {}, which is not on rank {}", plan_.describe({r, i}),
                                plan_.object(obj).name, r));
            }
            present[static_cast<std::size_t>(obj)] = 0;
          }
          continue;
        }
        for (int obj : program.writes(i)) {
          present[static_cast<std::size_t>(obj)] = 1;
          touched.push_back(obj);
        }
        if (op.kind == OpKind::send) stats.bytes_sent += plan_.object(program.reads(i)[0]).bytes;
        if (op.kind == OpKind::recv) {
          stats.bytes_received += plan_.object(program.writes(i)[0]).bytes;
        }
      }
    }
  }

  Contribution pair_contribution(ChunkPair bp, Pass pass) const {
    Contribution c;
    const int h = head_group(bp.q_chunk);
    for (int qb : plan_.chunks[static_cast<std::size_t>(bp.q_chunk)].blocks) {
      for (int kb : plan_.chunks[static_cast<std::size_t>(bp.kv_chunk)].blocks) {
        if (plan_.layout.mask(qb, kb, plan_.shape.mask) == BlockPairMask::skip) continue;
        ++c.count;
        c.hash += mix64(pair_index(h, qb, kb) * 2 + (pass == Pass::fwd ? 0 : 1));
      }
    }
    return c;
  }

  // What one compute adds to each accumulator it writes: the token-block pairs
  // of its chunk pairs whose chunk on the accumulator's axis is the object's.
  // Sums per q chunk and per kv chunk first, so a fused op over n pairs and
  // m writes costs n log n + m log n, not n * m.
  void add_compute_contributions(OpId id, HeldContributions& held) {
    const RankProgram& program = plan_.programs[static_cast<std::size_t>(id.rank)];
    const Op& op = program.op(id.index);
    by_q_.clear();
    by_kv_.clear();
    for (ChunkPair bp : program.pairs(id.index)) {
      const Contribution c = pair_contribution(bp, op.pass);
      by_q_.emplace_back(bp.q_chunk, c);
      by_kv_.emplace_back(bp.kv_chunk, c);
    }
    auto collapse = [](std::vector<std::pair<int, Contribution>>& v) {
      std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      std::size_t out = 0;
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (out > 0 && v[out - 1].first == v[k].first) {
          v[out - 1].second.add(v[k].second);
        } else {
          v[out++] = v[k];
        }
      }
      v.resize(out);
    };
    collapse(by_q_);
    collapse(by_kv_);
    for (int obj : program.writes(id.index)) {
      const Tensor tensor = tensor_of(obj);
      if (!is_accumulator(tensor)) continue;
      const auto& axis = reduces_over_kv(tensor) ? by_q_ : by_kv_;
      const int chunk = chunk_of(obj);
      auto it = std::lower_bound(axis.begin(), axis.end(), chunk,
                                 [](const auto& e, int c) { return e.first < c; });
      if (it == axis.end() || it->first != chunk) {
        error(fmt::format("{}: accumulates into {}, which belongs to another chunk",
                          plan_.describe(id), plan_.object(obj).name));
        continue;
      }
      held.at(id.rank, obj).add(it->second);
    }
  }

  Contribution expected_contribution(const DataObject& obj) const {
    Contribution c;
    const Pass pass =
        (obj.tensor == Tensor::dq || obj.tensor == Tensor::dkv) ? Pass::bwd : Pass::fwd;
    const int h = head_group(obj.chunk);
    for (int own : plan_.chunks[static_cast<std::size_t>(obj.chunk)].blocks) {
      for (int other = 0; other < plan_.layout.blocks; ++other) {
        const int qb = reduces_over_kv(obj.tensor) ? own : other;
        const int kb = reduces_over_kv(obj.tensor) ? other : own;
        if (plan_.layout.mask(qb, kb, plan_.shape.mask) == BlockPairMask::skip) continue;
        ++c.count;
        c.hash += mix64(pair_index(h, qb, kb) * 2 + (pass == Pass::fwd ? 0 : 1));
      }
    }
    return c;
  }

  void dry_run() {
    try {
      PlanTracker tracker(plan_);
      HeldContributions held(plan_);
      std::vector<OpId> computes;
      std::vector<Transfer> transfers;
      while (true) {
        computes.clear();
        transfers.clear();
        tracker.poll(computes, transfers);
        if (computes.empty() && transfers.empty()) break;
        for (OpId id : computes) {
          const RankProgram& program = plan_.programs[static_cast<std::size_t>(id.rank)];
          const Op& op = program.op(id.index);
          if (op.kind == OpKind::compute) {
            // A copy the compute creates starts empty: a block partial re-made
            // each step after its free (output_correction.hpp).
            for (int obj : tracker.allocated_by(id)) held.at(id.rank, obj) = Contribution{};
            add_compute_contributions(id, held);
          } else {  // merge: every partial adds into every target of the same kind
            for (int target : program.writes(id.index)) {
              for (int partial : program.reads(id.index)) {
                if (tensor_of(partial) != tensor_of(target)) continue;
                if (chunk_of(partial) != chunk_of(target)) continue;
                if (partial == target) continue;
                const Contribution c = held.at(id.rank, partial);
                held.at(id.rank, target).add(c);
              }
            }
          }
          tracker.finish(id);
        }
        for (const Transfer& t : transfers) {
          if (is_accumulator(tensor_of(t.object))) {
            const Contribution c = held.at(t.send.rank, t.object);
            held.at(t.recv.rank, t.object) = c;
          }
          tracker.finish_transfer(t);
        }
      }
      if (!tracker.all_done()) {
        std::string blocked;
        for (OpId id : tracker.first_blocked(4)) blocked += "\n  " + plan_.describe(id);
        error(fmt::format("deadlock: {} of {} ops can never run; first blocked ops:{}",
                          tracker.total_ops() - tracker.done_ops(), tracker.total_ops(), blocked));
        return;
      }
      for (int r = 0; r < plan_.ranks; ++r) {
        auto& stats = report_.ranks[static_cast<std::size_t>(r)];
        stats.peak_bytes = tracker.peak_bytes(r);
        stats.peak_breakdown = tracker.peak_breakdown(r);
      }
      for (int id = 0; id < static_cast<int>(plan_.objects.size()); ++id) {
        const DataObject& obj = plan_.object(id);
        if (!obj.output) continue;
        const Contribution want = expected_contribution(obj);
        const Contribution got = held.at(obj.home_rank, id);
        if (!(got == want)) {
          error(fmt::format(
              "output {} on rank {} holds {} block contributions, expected {}{}", obj.name,
              obj.home_rank, got.count, want.count,
              got.count == want.count ? " (a block is doubled and one is missing)" : ""));
        }
      }
    } catch (const PlanError& e) {
      error(e.what());
    }
  }

  Tensor tensor_of(int object) const { return tensor_[static_cast<std::size_t>(object)]; }
  int chunk_of(int object) const { return chunk_[static_cast<std::size_t>(object)]; }

  const Plan& plan_;
  PlanReport report_;
  std::vector<Tensor> tensor_;                              // per object
  std::vector<int> chunk_;                                  // per object
  std::vector<std::pair<int, Contribution>> by_q_, by_kv_;  // scratch of one compute
};

}  // namespace

double PlanReport::max_bytes_received() const {
  double m = 0.0;
  for (const auto& r : ranks) m = std::max(m, r.bytes_received);
  return m;
}

double PlanReport::total_bytes_sent() const {
  double t = 0.0;
  for (const auto& r : ranks) t += r.bytes_sent;
  return t;
}

double PlanReport::max_peak_bytes() const {
  double m = 0.0;
  for (const auto& r : ranks) m = std::max(m, r.peak_bytes);
  return m;
}

PlanReport validate_plan(const Plan& plan) {
  // The checks below index by the plan's ids: out-of-range ones are reported alone.
  std::vector<std::string> broken = plan_structure_errors(plan);
  if (!broken.empty()) {
    PlanReport report;
    report.errors = std::move(broken);
    return report;
  }
  return Validator(plan).run();
}

}  // namespace tilesim
