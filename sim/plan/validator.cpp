#include "sim/plan/validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

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

class Validator {
 public:
  explicit Validator(const Plan& plan) : plan_(plan) {
    report_.ranks.resize(static_cast<std::size_t>(plan.ranks));
  }

  ValidationReport run() {
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
        if (op.kind == OpKind::compute &&
            (op.q_chunk < 0 || op.q_chunk >= chunks || op.kv_chunk < 0 || op.kv_chunk >= chunks)) {
          error(
              fmt::format("rank {} op {}: compute names a chunk outside 0..{}", r, i, chunks - 1));
        } else if (op.kind == OpKind::compute &&
                   head_group(op.q_chunk) != head_group(op.kv_chunk)) {
          error(fmt::format("{}: q chunk is in head group {} and kv chunk in head group {}",
                            plan_.describe({r, i}), head_group(op.q_chunk),
                            head_group(op.kv_chunk)));
        }
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
    std::vector<std::uint8_t> done[2];
    std::vector<OpId> first[2];
    const bool pass_used[2] = {plan_.shape.has_forward(), plan_.shape.has_backward()};
    for (int p = 0; p < 2; ++p) {
      if (pass_used[p]) {
        done[p].assign(groups * blocks * blocks, 0);
        first[p].assign(groups * blocks * blocks, OpId{-1, -1});
      }
    }
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      auto& stats = report_.ranks[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        if (op.kind != OpKind::compute) continue;
        const int p = op.pass == Pass::fwd ? 0 : 1;
        stats.compute_flops += plan_.compute_flops(op);
        ++stats.computes;
        if (!pass_used[p]) {
          error(fmt::format("{}: the scenario has no {} pass", plan_.describe({r, i}),
                            to_string(op.pass)));
          continue;
        }
        bool any_unmasked = false;
        const int h = head_group(op.q_chunk);
        for (int qb : plan_.chunks[static_cast<std::size_t>(op.q_chunk)].blocks) {
          for (int kb : plan_.chunks[static_cast<std::size_t>(op.kv_chunk)].blocks) {
            if (plan_.layout.mask(qb, kb, plan_.shape.causal) == BlockMask::skip) continue;
            any_unmasked = true;
            const std::size_t k = pair_index(h, qb, kb);
            if (done[p][k] == 0) first[p][k] = {r, i};
            if (done[p][k] == 1) {
              error(fmt::format("duplicated block (q {}, kv {}{}) {}: computed by {} and by {}", qb,
                                kb, group_suffix(h), to_string(op.pass),
                                plan_.describe(first[p][k]), plan_.describe({r, i})));
            }
            if (done[p][k] < 2) ++done[p][k];
          }
        }
        if (!any_unmasked) {
          error(fmt::format("{}: every pair of this block is masked", plan_.describe({r, i})));
        }
      }
    }
    for (int p = 0; p < 2; ++p) {
      if (!pass_used[p]) continue;
      for (int h = 0; h < plan_.head_groups; ++h) {
        for (int qb = 0; qb < plan_.layout.blocks; ++qb) {
          for (int kb = 0; kb < plan_.layout.blocks; ++kb) {
            if (plan_.layout.mask(qb, kb, plan_.shape.causal) == BlockMask::skip) continue;
            if (done[p][pair_index(h, qb, kb)] == 0) {
              error(fmt::format("missing block (q {}, kv {}{}) {}: no rank computes it", qb, kb,
                                group_suffix(h), p == 0 ? "fwd" : "bwd"));
            }
          }
        }
      }
    }
  }

  // ", head group h" when heads are split, so single-group messages stay as they were.
  std::string group_suffix(int h) const {
    return plan_.head_groups > 1 ? fmt::format(", head group {}", h) : std::string();
  }

  void check_availability() {
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankProgram& program = plan_.programs[static_cast<std::size_t>(r)];
      auto& stats = report_.ranks[static_cast<std::size_t>(r)];
      std::unordered_set<int> present;
      for (int id = 0; id < static_cast<int>(plan_.objects.size()); ++id) {
        if (plan_.object(id).input && plan_.object(id).home_rank == r) present.insert(id);
      }
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        const Op& op = program.op(i);
        for (int obj : program.reads(i)) {
          if (present.count(obj) == 0) {
            error(fmt::format("{}: reads {} before it is on rank {}", plan_.describe({r, i}),
                              plan_.object(obj).name, r));
          }
        }
        if (op.kind == OpKind::free) {
          for (int obj : program.writes(i)) {
            if (present.erase(obj) == 0) {
              error(fmt::format("{}: frees {}, which is not on rank {}", plan_.describe({r, i}),
                                plan_.object(obj).name, r));
            }
          }
          continue;
        }
        for (int obj : program.writes(i)) present.insert(obj);
        if (op.kind == OpKind::send) stats.bytes_sent += plan_.object(program.reads(i)[0]).bytes;
        if (op.kind == OpKind::recv) {
          stats.bytes_received += plan_.object(program.writes(i)[0]).bytes;
        }
      }
    }
  }

  Contribution block_contribution(const Op& op, int object) const {
    // The pairs an accumulator gains from one compute, keyed by its chunk axis.
    Contribution c;
    const DataObject& obj = plan_.object(object);
    const int key_chunk = reduces_over_kv(obj.tensor) ? op.q_chunk : op.kv_chunk;
    if (key_chunk != obj.chunk) return Contribution{-1'000'000'000, 0};
    const int h = head_group(op.q_chunk);
    for (int qb : plan_.chunks[static_cast<std::size_t>(op.q_chunk)].blocks) {
      for (int kb : plan_.chunks[static_cast<std::size_t>(op.kv_chunk)].blocks) {
        if (plan_.layout.mask(qb, kb, plan_.shape.causal) == BlockMask::skip) continue;
        ++c.count;
        c.hash += mix64(pair_index(h, qb, kb) * 2 + (op.pass == Pass::fwd ? 0 : 1));
      }
    }
    return c;
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
        if (plan_.layout.mask(qb, kb, plan_.shape.causal) == BlockMask::skip) continue;
        ++c.count;
        c.hash += mix64(pair_index(h, qb, kb) * 2 + (pass == Pass::fwd ? 0 : 1));
      }
    }
    return c;
  }

  std::uint64_t key(int rank, int object) const {
    return static_cast<std::uint64_t>(rank) * plan_.objects.size() +
           static_cast<std::uint64_t>(object);
  }

  void dry_run() {
    try {
      PlanTracker tracker(plan_);
      std::unordered_map<std::uint64_t, Contribution> held;
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
            for (int obj : program.writes(id.index)) {
              if (!is_accumulator(plan_.object(obj).tensor)) continue;
              const Contribution c = block_contribution(op, obj);
              if (c.count < 0) {
                error(fmt::format("{}: accumulates into {}, which belongs to another chunk",
                                  plan_.describe(id), plan_.object(obj).name));
              }
              held[key(id.rank, obj)].add(c);
            }
          } else {  // merge: every partial adds into every target of the same kind
            for (int target : program.writes(id.index)) {
              for (int partial : program.reads(id.index)) {
                if (plan_.object(partial).tensor != plan_.object(target).tensor) continue;
                if (plan_.object(partial).chunk != plan_.object(target).chunk) continue;
                if (partial == target) continue;
                held[key(id.rank, target)].add(held[key(id.rank, partial)]);
              }
            }
          }
          tracker.finish(id);
        }
        for (const Transfer& t : transfers) {
          if (is_accumulator(plan_.object(t.object).tensor)) {
            held[key(t.recv.rank, t.object)] = held[key(t.send.rank, t.object)];
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
        const Contribution got = held[key(obj.home_rank, id)];
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

  const Plan& plan_;
  ValidationReport report_;
};

}  // namespace

double ValidationReport::max_bytes_received() const {
  double m = 0.0;
  for (const auto& r : ranks) m = std::max(m, r.bytes_received);
  return m;
}

double ValidationReport::total_bytes_sent() const {
  double t = 0.0;
  for (const auto& r : ranks) t += r.bytes_sent;
  return t;
}

double ValidationReport::max_peak_bytes() const {
  double m = 0.0;
  for (const auto& r : ranks) m = std::max(m, r.peak_bytes);
  return m;
}

ValidationReport validate_plan(const Plan& plan) { return Validator(plan).run(); }

}  // namespace tilesim
