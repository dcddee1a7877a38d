// The order the runtime executor enforces equals the order the simulator's tracker enforces,
// for every schedule kind on small plans. Each side's happens-before relation per rank is
// rebuilt from what that consumer itself reads:
//   tracker:  its successor lists, plus its comm-group rule (group g posts once g-1 has
//             completed and every op of g is ready);
//   executor: IssueOrder::waits_for, plus its issue rules (compute ops in program order on an
//             in-order stream; a group posted whole, once every member can be issued).
// "j before i" means i cannot finish before j has finished; the test compares the transitive
// closures, so the tracker's folded compute stream and the executor's full prerequisite lists
// must imply the same order.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executor/issue_order.hpp"
#include "sim/plan/plan_tracker.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

// before[i] holds bit j when j happens before i.
class Order {
 public:
  explicit Order(std::size_t n) : n_(n), words_((n + 63) / 64), bits_(n * words_, 0) {}
  void add(int before, int after) {
    bits_[static_cast<std::size_t>(after) * words_ + static_cast<std::size_t>(before) / 64] |=
        std::uint64_t{1} << (static_cast<unsigned>(before) % 64);
  }
  bool has(std::size_t before, std::size_t after) const {
    return (bits_[after * words_ + before / 64] >> (before % 64)) & 1;
  }
  // Warshall: if k before i, everything before k is before i.
  void close() {
    for (std::size_t k = 0; k < n_; ++k) {
      for (std::size_t i = 0; i < n_; ++i) {
        if (!has(k, i)) continue;
        for (std::size_t w = 0; w < words_; ++w) bits_[i * words_ + w] |= bits_[k * words_ + w];
      }
    }
  }
  std::size_t size() const { return n_; }

 private:
  std::size_t n_, words_;
  std::vector<std::uint64_t> bits_;
};

// Every member of a group waits for what any member waits for (the group is posted whole).
void add_group_posting(Order& order, const std::vector<std::vector<int>>& members,
                       const std::vector<std::vector<int>>& waits) {
  for (const auto& group : members) {
    for (int m : group) {
      for (int p : waits[static_cast<std::size_t>(m)]) {
        for (int other : group) {
          if (other != p) order.add(p, other);
        }
      }
    }
  }
}

Order tracker_order(const PlanTracker& tracker, int rank, std::size_t n) {
  Order order(n);
  std::vector<std::vector<int>> waits(n);
  std::vector<std::vector<int>> groups;
  for (int j = 0; j < static_cast<int>(n); ++j) {
    for (int s : tracker.successors({rank, j})) {
      order.add(j, s);
      waits[static_cast<std::size_t>(s)].push_back(j);
    }
    const int g = tracker.comm_group_index({rank, j});
    if (g < 0) continue;
    if (static_cast<std::size_t>(g) >= groups.size())
      groups.resize(static_cast<std::size_t>(g) + 1);
    groups[static_cast<std::size_t>(g)].push_back(j);
  }
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (int p : groups[g - 1]) {
      for (int i : groups[g]) order.add(p, i);
    }
  }
  add_group_posting(order, groups, waits);
  order.close();
  return order;
}

Order executor_order(const runtime::IssueOrder& issue, std::size_t n) {
  const RankSemantics& sem = issue.semantics();
  Order order(n);
  std::vector<std::vector<int>> waits(n);
  for (int i = 0; i < static_cast<int>(n); ++i) {
    issue.waits_for(i, waits[static_cast<std::size_t>(i)]);
    for (int p : waits[static_cast<std::size_t>(i)]) order.add(p, i);
  }
  const auto& computes = sem.compute_ops();
  for (std::size_t k = 1; k < computes.size(); ++k) order.add(computes[k - 1], computes[k]);
  std::vector<std::vector<int>> groups;
  for (int g = 0; g < sem.group_count(); ++g) {
    const auto ops = sem.group_ops(g);
    groups.emplace_back(ops.begin(), ops.end());
  }
  add_group_posting(order, groups, waits);
  order.close();
  return order;
}

// The first pair on which the two relations differ, or "" when they are equal.
std::string difference(const Plan& plan, int rank, const Order& tracker, const Order& executor) {
  for (std::size_t i = 0; i < tracker.size(); ++i) {
    for (std::size_t j = 0; j < tracker.size(); ++j) {
      if (tracker.has(j, i) == executor.has(j, i)) continue;
      return plan.describe({rank, static_cast<int>(j)}) + " before " +
             plan.describe({rank, static_cast<int>(i)}) + ": tracker " +
             (tracker.has(j, i) ? "yes" : "no") + ", executor " +
             (executor.has(j, i) ? "yes" : "no");
    }
  }
  return "";
}

struct Counts {
  int plans = 0;
  std::size_t ordered_pairs = 0;  // pairs (j, i) with j before i, over all ranks
};

void check_same_order(const Plan& plan, Counts& counts) {
  const PlanTracker tracker(plan);
  ++counts.plans;
  for (int r = 0; r < plan.ranks; ++r) {
    const std::size_t n = plan.programs[static_cast<std::size_t>(r)].size();
    const runtime::IssueOrder issue(plan, r);
    REQUIRE(issue.semantics().size() == n);
    const Order t = tracker_order(tracker, r, n);
    const Order e = executor_order(issue, n);
    // Groups: the same ops in the same order on both sides.
    for (int i = 0; i < static_cast<int>(n); ++i) {
      REQUIRE(tracker.comm_group_index({r, i}) == issue.semantics().group_of(i));
    }
    const std::string diff = difference(plan, r, t, e);
    INFO(plan.schedule << " P = " << plan.ranks << " rank " << r);
    CHECK(diff == "");
    for (std::size_t i = 0; i < n; ++i) {
      CHECK_FALSE(t.has(i, i));  // no cycle: a valid plan cannot deadlock on one rank
      for (std::size_t j = 0; j < n; ++j) counts.ordered_pairs += t.has(j, i) ? 1 : 0;
    }
  }
}

struct Case {
  std::string kind;
  int gpus;
  int tile_a = 0, tile_b = 0;  // mesh
  int ulysses = 0;             // usp
  int inner = 0;               // double_ring
  bool backward = false;
};

}  // namespace

TEST_CASE("runtime: the executor enforces the tracker's order for every schedule", "[runtime]") {
  std::vector<Case> cases;
  for (int p : {2, 3, 4, 8}) {
    for (const char* k : {"ring", "zigzag", "striped"}) cases.push_back({k, p, 0, 0, 0, 0, true});
    for (const char* k : {"pass_q", "allgather_kv"}) cases.push_back({k, p, 0, 0, 0, 0, false});
  }
  for (int p : {2, 4, 8}) cases.push_back({"ulysses", p, 0, 0, 0, 0, true});
  for (auto [p, u] : {std::pair{4, 2}, {8, 2}, {8, 4}})
    cases.push_back({"usp", p, 0, 0, u, 0, true});
  for (auto [p, inner] : {std::pair{4, 2}, {8, 2}, {8, 4}}) {
    cases.push_back({"double_ring", p, 0, 0, 0, inner, false});
  }
  for (auto [a, b] :
       {std::pair{1, 2}, {2, 1}, {2, 2}, {1, 4}, {4, 1}, {2, 3}, {3, 2}, {2, 4}, {4, 2}}) {
    cases.push_back({"mesh", a * b, a, b, 0, 0, true});
  }
  Counts counts;
  std::vector<std::string> kinds_seen;
  for (const Case& c : cases) {
    for (bool causal : {false, true}) {
      std::vector<PassSelection> passes = {PassSelection::forward};
      if (c.backward) {
        passes.push_back(PassSelection::backward);
        passes.push_back(PassSelection::both);
      }
      for (PassSelection pass : passes) {
        ScheduleSpec spec;
        spec.kind = c.kind;
        spec.gpus = c.gpus;
        spec.tile_a = c.tile_a;
        spec.tile_b = c.tile_b;
        spec.ulysses_degree = c.ulysses;
        spec.inner_ring = c.inner;
        INFO(c.kind << " P = " << c.gpus << (causal ? " causal " : " ") << to_string(pass));
        const Plan plan = make_plan(shape_with(true, causal, pass), spec);
        check_same_order(plan, counts);
        if (std::find(kinds_seen.begin(), kinds_seen.end(), c.kind) == kinds_seen.end()) {
          kinds_seen.push_back(c.kind);
        }
      }
    }
  }
  // Every kind was covered and the relations are not trivially empty.
  CHECK(kinds_seen.size() == std::size(kScheduleKinds));
  CHECK(counts.plans == 184);  // 22 x 4 + 18 + 18 + 6 + 54 plans listed above
  CHECK(counts.ordered_pairs > 1000);
}

TEST_CASE("runtime: the separate correction's merge follows its call, the partial's free the merge",
          "[runtime]") {
  AttentionShape shape;
  shape.seq_len = 64;
  shape.heads = 2;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  ScheduleSpec spec;
  spec.gpus = 4;
  const Plan plan = make_plan(shape, spec);
  const RankProgram& program = plan.programs[1];
  const runtime::IssueOrder issue(plan, 1);
  const RankSemantics& sem = issue.semantics();
  // Four calls and three corrections on the compute stream; three KV frees and, after each
  // correction, one free that drops both the O and the LSE block partial.
  CHECK(sem.compute_ops().size() == 4 + 3);
  CHECK(sem.free_ops().size() == 3 + 3);
  const auto waits = [&](int op, int on) {
    std::vector<int> w;
    issue.waits_for(op, w);
    return std::find(w.begin(), w.end(), on) != w.end();
  };
  int merges = 0;
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind != OpKind::merge) continue;
    ++merges;
    REQUIRE(program.op(i - 1).kind == OpKind::compute);
    CHECK(waits(i, i - 1));  // reads the partials the call wrote
    CHECK(program.op(i + 1).kind == OpKind::free);
    CHECK(waits(i + 1, i));  // the partial is dropped once merged
  }
  CHECK(merges == 3);
}
