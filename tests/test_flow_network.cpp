// FlowNetwork scenarios with hand-computed finish times (picoseconds).
// Time to move b bytes at x bytes/s is b * 1e12 / x ps, rounded up.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "sim/network/flow_network.hpp"

using namespace tilesim;

namespace {

FlowSpec spec(std::vector<int> links, double bytes, double cap_bytes_per_s = 0.0) {
  return FlowSpec{std::move(links), bytes, cap_bytes_per_s};
}

}  // namespace

TEST_CASE("network: a single flow takes bytes / capacity") {
  FlowNetwork net({50e9});
  // 1e9 B at 50e9 B/s = 0.02 s = 2e10 ps, from t = 1000 ps.
  const FlowId id = net.start(spec({0}, 1e9), 1000);
  CHECK(net.rate_bytes_per_s(id) == 0.0);  // until settled
  CHECK_FALSE(net.next_finish_ps());
  net.settle(1000);
  CHECK(net.rate_bytes_per_s(id) == 50e9);
  CHECK(net.next_finish_ps() == 1000 + 20'000'000'000);
  CHECK(net.take_finished(1000 + 19'999'999'999).empty());
  CHECK(net.take_finished(1000 + 20'000'000'000) == std::vector<FlowId>{id});
  CHECK(net.active_flows() == 0);
  CHECK_FALSE(net.contains(id));

  // 1000 B at 3e9 B/s = 333333.33.. ps -> rounded up to 333334.
  FlowNetwork thirds({3e9});
  thirds.start(spec({0}, 1000), 0);
  thirds.settle(0);
  CHECK(thirds.next_finish_ps() == 333'334);
}

TEST_CASE("network: two flows share a link, and the survivor speeds up") {
  // Link 1e9 B/s. A = 1000 B, B = 3000 B, both from t = 0: 5e8 B/s each.
  // A: 1000 / 5e8 = 2e-6 s -> 2,000,000 ps. By then B moved 1000 B, 2000 left,
  // now alone at 1e9 B/s: 2e-6 s more -> 4,000,000 ps.
  FlowNetwork net({1e9});
  const FlowId a = net.start(spec({0}, 1000), 0);
  const FlowId b = net.start(spec({0}, 3000), 0);
  net.settle(0);
  CHECK(net.rate_bytes_per_s(a) == 5e8);
  CHECK(net.rate_bytes_per_s(b) == 5e8);
  CHECK(net.next_finish_ps() == 2'000'000);
  CHECK(net.projected_finish_ps(b) == 6'000'000);  // at the shared rate
  CHECK(net.take_finished(2'000'000) == std::vector<FlowId>{a});
  net.settle(2'000'000);
  CHECK(net.rate_bytes_per_s(b) == 1e9);
  CHECK(net.next_finish_ps() == 4'000'000);
  CHECK(net.take_finished(4'000'000) == std::vector<FlowId>{b});
  net.settle(4'000'000);
  CHECK_FALSE(net.next_finish_ps());
}

TEST_CASE("network: a late flow joins: both end together and come back in id order") {
  // Link 1e9 B/s. A = 2000 B from t = 0 alone; at t = 1e6 ps it has 1000 B left.
  // B = 1000 B joins at 1e6: both at 5e8 B/s, both need 2e6 ps -> both at 3e6.
  FlowNetwork net({1e9});
  const FlowId a = net.start(spec({0}, 2000), 0);
  net.settle(0);
  CHECK(net.next_finish_ps() == 2'000'000);
  const FlowId b = net.start(spec({0}, 1000), 1'000'000);
  net.settle(1'000'000);
  CHECK(net.projected_finish_ps(a) == 3'000'000);
  CHECK(net.projected_finish_ps(b) == 3'000'000);
  CHECK(net.take_finished(3'000'000) == std::vector<FlowId>{a, b});
}

TEST_CASE("network: classic max-min example through the network, with link loads") {
  // A = link 0 (10 GB/s), B = link 1 (4 GB/s): flow 1 on A+B, flow 2 on A,
  // flow 3 on B -> 2, 8, 2 GB/s; A carries 2 + 8 = 10, B carries 2 + 2 = 4.
  FlowNetwork net({10e9, 4e9});
  const FlowId f1 = net.start(spec({0, 1}, 1e9), 0);
  const FlowId f2 = net.start(spec({0}, 1e9), 0);
  const FlowId f3 = net.start(spec({1}, 1e9), 0);
  net.settle(0);
  CHECK(net.rate_bytes_per_s(f1) == 2e9);
  CHECK(net.rate_bytes_per_s(f2) == 8e9);
  CHECK(net.rate_bytes_per_s(f3) == 2e9);
  CHECK(net.link_load_bytes_per_s(0) == 10e9);
  CHECK(net.link_load_bytes_per_s(1) == 4e9);
  // f2: 1e9 B at 8e9 B/s = 0.125 s.
  CHECK(net.next_finish_ps() == 125'000'000'000);
}

TEST_CASE("network: a capped flow runs at its cap and leaves the rest to the others") {
  // 10 GB/s link. Flow c capped at 2 GB/s, flow d uncapped: c = 2, d = 8.
  // c: 4e9 B / 2e9 = 2 s. d: 4e9 B / 8e9 = 0.5 s.
  FlowNetwork net({10e9});
  const FlowId c = net.start(spec({0}, 4e9, 2e9), 0);
  const FlowId d = net.start(spec({0}, 4e9), 0);
  net.settle(0);
  CHECK(net.rate_bytes_per_s(c) == 2e9);
  CHECK(net.rate_bytes_per_s(d) == 8e9);
  CHECK(net.projected_finish_ps(c) == 2 * kPsPerSecond);
  CHECK(net.projected_finish_ps(d) == kPsPerSecond / 2);
}

TEST_CASE("network: empty routes: capped copies take bytes / cap, uncapped ones end at start") {
  FlowNetwork net({1e9});
  // 1000 B at a 1e9 B/s cap = 1e6 ps. Like every flow it moves from the settle
  // that gives it a rate (t = 7): finish 1'000'007.
  const FlowId capped = net.start(spec({}, 1000, 1e9), 5);
  const FlowId instant = net.start(spec({}, 1e12), 5);
  net.settle(7);  // settled a little later: the uncapped copy still ends at 5
  CHECK(net.rate_bytes_per_s(capped) == 1e9);
  CHECK(std::isinf(net.rate_bytes_per_s(instant)));
  CHECK(net.projected_finish_ps(instant) == 5);
  CHECK(net.projected_finish_ps(capped) == 1'000'007);
  CHECK(net.take_finished(7) == std::vector<FlowId>{instant});
  CHECK(net.link_load_bytes_per_s(0) == 0.0);
}

TEST_CASE("network: drift guard: a flow ends early only within the current picosecond") {
  // Link 1e12 B/s = 1 B/ps. A = 1000.5 B from t = 0 -> finish ceil(1000.5) = 1001.
  // B (2000 B) joins at t = 1000: A has 0.5 B left, at its new 0.5 B/ps that is 1 ps,
  // not within this picosecond, so A goes on: finish 1001. B moves 0.5 B by 1001, then
  // 1999.5 B alone at 1 B/ps: 1001 + ceil(1999.5) = 3001.
  FlowNetwork net({1e12});
  const FlowId a = net.start(spec({0}, 1000.5), 0);
  net.settle(0);
  CHECK(net.next_finish_ps() == 1001);
  const FlowId b = net.start(spec({0}, 2000), 1000);
  net.settle(1000);
  CHECK(net.projected_finish_ps(a) == 1001);
  CHECK(net.rate_bytes_per_s(a) == 0.5e12);
  CHECK(net.rate_bytes_per_s(b) == 0.5e12);
  CHECK(net.take_finished(1001) == std::vector<FlowId>{a});
  net.settle(1001);
  CHECK(net.projected_finish_ps(b) == 3001);

  // A = 1000.25 B: at t = 1000 it has 0.25 B left, 0.5 ps at 0.5 B/ps: it ends at 1000
  // and B gets the whole link from 1000: finish 1000 + 2000 = 3000.
  FlowNetwork quarter({1e12});
  const FlowId a2 = quarter.start(spec({0}, 1000.25), 0);
  quarter.settle(0);
  const FlowId b2 = quarter.start(spec({0}, 2000), 1000);
  quarter.settle(1000);
  CHECK(quarter.projected_finish_ps(a2) == 1000);
  CHECK(quarter.rate_bytes_per_s(a2) == 0.0);
  CHECK(quarter.rate_bytes_per_s(b2) == 1e12);
  CHECK(quarter.take_finished(1000) == std::vector<FlowId>{a2});
  quarter.settle(1000);
  CHECK(quarter.projected_finish_ps(b2) == 3000);
}

TEST_CASE("network: drift guard: a collapse of a nearly finished flow's rate is not cut short") {
  // Issue 12's first case. A 1000 B flow alone on a 10 GB/s link would finish at
  // 1000 / 1e10 s = 100,000 ps. At 99,910 ps it has 1000 - 1e10 x 99,910e-12 = 0.9 B
  // left when 999 flows (1 MB each) join the link: 1e10 / 1000 = 1e7 B/s each, so the
  // 0.9 B take 0.9 / 1e7 s = 90,000 ps: true finish 189,910 ps (the old byte guard ended
  // it at 99,910 ps, 47% of its duration short).
  FlowNetwork net({1e10});
  const FlowId small = net.start(spec({0}, 1000), 0);
  net.settle(0);
  CHECK(net.next_finish_ps() == 100'000);
  for (int i = 0; i < 999; ++i) net.start(spec({0}, 1e6), 99'910);
  net.settle(99'910);
  CHECK(net.rate_bytes_per_s(small) == Approx(1e7).epsilon(1e-12));
  // 0.9 B is inexact in binary, so the finish may be rounded up from 189,910 + ~1e-8 ps
  // to the next picosecond; it is 189,910 in practice.
  const Picoseconds finish = *net.projected_finish_ps(small);
  CHECK(finish >= 189'910);
  CHECK(finish <= 189'911);
  CHECK(net.next_finish_ps() == finish);
  CHECK(net.take_finished(finish) == std::vector<FlowId>{small});

  // Issue 12's second case. A 1 GB flow alone on 500 GB/s would take 1e9 / 5e11 s =
  // 2,000,000,000 ps. With 900 B left, at (1e9 - 900) / 5e11 s = 1,999,998,200 ps,
  // 9,999 flows (1 GB each) join: 5e11 / 10,000 = 5e7 B/s each, and the 900 B take
  // 900 / 5e7 s = 18,000,000 ps: true finish 2,017,998,200 ps (the old guard, 900 B <=
  // 1e-6 x 1 GB, ended it at 1,999,998,200 ps: 0.9% early).
  FlowNetwork big({5e11});
  const FlowId gig = big.start(spec({0}, 1e9), 0);
  big.settle(0);
  CHECK(big.next_finish_ps() == 2'000'000'000);
  for (int i = 0; i < 9'999; ++i) big.start(spec({0}, 1e9), 1'999'998'200);
  big.settle(1'999'998'200);
  const Picoseconds gig_finish = *big.projected_finish_ps(gig);
  CHECK(gig_finish >= 2'017'998'200);
  CHECK(gig_finish <= 2'017'998'201);
  CHECK(big.take_finished(gig_finish) == std::vector<FlowId>{gig});
}

TEST_CASE("network: a finished flow not yet taken keeps its finish time and rate 0") {
  // 1e9 B/s link. p = 1000 B and q = 5000 B from 0 at 5e8 B/s each: p ends at
  // 2e6 ps, q is projected at 1e7. The caller settles at 3e6 without taking p:
  // - a change elsewhere (an empty-route copy) leaves p's component untouched;
  // - r = 2500 B joins the link: p keeps finish 2e6 with rate 0, q and r share
  //   the link at 5e8 each: q's rate is unchanged so its finish stays 1e7
  //   (3500 B left at 3e6), r ends at 3e6 + 2500 / 5e8 s = 8e6.
  FlowNetwork net({1e9});
  const FlowId p = net.start(spec({0}, 1000), 0);
  const FlowId q = net.start(spec({0}, 5000), 0);
  net.settle(0);
  CHECK(net.projected_finish_ps(p) == 2'000'000);
  CHECK(net.projected_finish_ps(q) == 10'000'000);
  net.start(spec({}, 10, 1e9), 3'000'000);
  net.settle(3'000'000);
  CHECK(net.rate_bytes_per_s(p) == 5e8);
  const FlowId r = net.start(spec({0}, 2500), 3'000'000);
  net.settle(3'000'000);
  CHECK(net.projected_finish_ps(p) == 2'000'000);
  CHECK(net.rate_bytes_per_s(p) == 0.0);
  CHECK(net.projected_finish_ps(q) == 10'000'000);
  CHECK(net.projected_finish_ps(r) == 8'000'000);
  CHECK(net.link_load_bytes_per_s(0) == 1e9);
  CHECK(net.take_finished(3'000'000) == std::vector<FlowId>{p});
}

TEST_CASE("network: only the component of a change is recomputed") {
  // x on link 0, y on links 1+2 (disjoint). Two flows join link 0 later: x and
  // the two newcomers are recomputed (3 more, in one settle), y keeps its rate
  // and finish time; x gets 1e9 / 3 B/s.
  FlowNetwork net({1e9, 1e9, 1e9});
  const FlowId x = net.start(spec({0}, 1e6), 0);
  const FlowId y = net.start(spec({1, 2}, 1e6), 0);
  net.settle(0);
  CHECK(net.recomputed_flows() == 2);
  const auto y_finish = net.projected_finish_ps(y);
  net.start(spec({0}, 1e6), 10);
  net.start(spec({0}, 1e6), 10);  // two starts, one settle
  net.settle(10);
  CHECK(net.recomputed_flows() == 2 + 3);
  CHECK(net.projected_finish_ps(y) == y_finish);
  CHECK(net.rate_bytes_per_s(x) == Approx(1e9 / 3));
  net.settle(20);  // nothing changed: nothing recomputed
  CHECK(net.recomputed_flows() == 5);
}

TEST_CASE("network: a change re-solves only the fill levels from the first one it alters") {
  // Link 0 (1e9 B/s) carries a, b and e; link 1 (9e9 B/s) carries e and c. Filling: pop 0
  // is link 0 (share 1e9 / 3 < 9e9 / 2): a, b, e get 1e9 / 3; pop 1 is link 1: c gets
  // the rest, 9e9 - 1e9 / 3. Flow g joins link 1: at pop 0 link 1 would offer 9e9 / 3 >
  // 1e9 / 3, so pop 0 stays and only pop 1 is filled again: c and g (2 recomputations,
  // not 5), each (9e9 - 1e9 / 3) / 2. When g ends, only pop 1 again: c alone gets its
  // old rate back, and a, b, e keep their rates and finish times throughout.
  const double third = 1e9 / 3;
  FlowNetwork net({1e9, 9e9});
  const FlowId a = net.start(spec({0}, 1e12), 0);
  const FlowId b = net.start(spec({0}, 1e12), 0);
  const FlowId e = net.start(spec({0, 1}, 1e12), 0);
  const FlowId c = net.start(spec({1}, 1e12), 0);
  net.settle(0);
  CHECK(net.recomputed_flows() == 4);
  CHECK(net.rate_bytes_per_s(e) == third);
  CHECK(net.rate_bytes_per_s(c) == 9e9 - third);
  const auto a_finish = net.projected_finish_ps(a);
  const auto e_finish = net.projected_finish_ps(e);
  const FlowId g = net.start(spec({1}, 1000), 10);
  net.settle(10);
  CHECK(net.recomputed_flows() == 4 + 2);
  const double half_rest = (9e9 - third) / 2;
  CHECK(net.rate_bytes_per_s(c) == half_rest);
  CHECK(net.rate_bytes_per_s(g) == half_rest);
  CHECK(net.rate_bytes_per_s(a) == third);
  CHECK(net.rate_bytes_per_s(b) == third);
  CHECK(net.projected_finish_ps(a) == a_finish);
  CHECK(net.projected_finish_ps(e) == e_finish);
  CHECK(net.rerated_flows() == std::vector<FlowId>{c, g});
  // g: 1000 B at half_rest from 10 ps.
  const auto g_finish = static_cast<Picoseconds>(10 + std::ceil(1000 * 1e12 / half_rest));
  CHECK(net.projected_finish_ps(g) == g_finish);
  CHECK(net.next_finish_ps() == g_finish);
  CHECK(net.take_finished(g_finish) == std::vector<FlowId>{g});
  net.settle(g_finish);
  CHECK(net.recomputed_flows() == 4 + 2 + 1);
  CHECK(net.rate_bytes_per_s(c) == 9e9 - third);
  CHECK(net.rerated_flows() == std::vector<FlowId>{c});
  CHECK(net.projected_finish_ps(a) == a_finish);
}

namespace {

// Runs a network to the end; returns every flow's finish time by id.
std::vector<Picoseconds> finishes(FlowNetwork& net, std::size_t flows) {
  std::vector<Picoseconds> done(flows, -1);
  net.settle(0);
  while (auto t = net.next_finish_ps()) {
    for (FlowId id : net.take_finished(*t)) done[static_cast<std::size_t>(id)] = *t;
    net.settle(*t);
  }
  return done;
}

}  // namespace

TEST_CASE("network: k identical flows equal one flow of multiplicity k, to the picosecond") {
  // Link 0 (10e9 B/s) carries y (2e6 B) and x_1..x_3 (5e6 B each), x_i also its own link i
  // (4e9 B/s). One class flow x on link 0 with multiplicity 3 and on link 1 with 1 (one
  // private link stands for the three) is the same problem. Uncapped: all get 10e9 / 4
  // = 2.5e9 until y ends at 2e6 / 2.5e9 s = 8e8 ps; then x gets 10e9 / 3 for its
  // last 3e6 B. Capped at 3e9: y ends as before, then the cap (3e9 < 10e9 / 3) binds:
  // 3e6 B in 1e9 ps.
  for (const double cap : {0.0, 3e9}) {
    CAPTURE(cap);
    FlowNetwork apart({10e9, 4e9, 4e9, 4e9});
    apart.start(spec({0}, 2e6), 0);
    for (int i = 1; i <= 3; ++i) apart.start(spec({0, i}, 5e6, cap), 0);
    FlowNetwork together({10e9, 4e9});
    together.start(spec({0}, 2e6), 0);
    FlowSpec x = spec({0, 1}, 5e6, cap);
    x.link_multiplicity = {3, 1};
    together.start(x, 0);
    apart.settle(0);
    together.settle(0);
    CHECK(together.rate_bytes_per_s(1) == apart.rate_bytes_per_s(1));
    CHECK(together.link_load_bytes_per_s(0) == apart.link_load_bytes_per_s(0));
    CHECK(together.link_load_bytes_per_s(0) == 10e9);
    const auto a = finishes(apart, 4);
    const auto t = finishes(together, 2);
    CHECK(a[0] == 800'000'000);
    CHECK(t[0] == a[0]);
    const double x_rate = cap > 0 ? cap : 10e9 / 3;
    const auto x_finish = static_cast<Picoseconds>(800'000'000 + std::ceil(3e6 * 1e12 / x_rate));
    CHECK(std::llabs(a[1] - x_finish) <= 1);  // the remaining bytes carry rounding
    for (int i = 1; i <= 3; ++i) CHECK(a[static_cast<std::size_t>(i)] == t[1]);
  }
}

TEST_CASE("network: a multiplicity needs one entry >= 1 per route link") {
  FlowNetwork net({1e9, 1e9});
  FlowSpec short_list = spec({0, 1}, 100);
  short_list.link_multiplicity = {2};
  CHECK_THROWS_AS(net.start(short_list, 0), std::invalid_argument);
  FlowSpec zero = spec({0, 1}, 100);
  zero.link_multiplicity = {1, 0};
  CHECK_THROWS_AS(net.start(zero, 0), std::invalid_argument);
}

TEST_CASE("network: ids stay valid while thousands of flows before and after them are taken") {
  // 3000 short flows on link 1 (1e9 B/s), one after the other, 1000 B each: 1e6 ps apiece;
  // a long flow on link 0 starts after the 1500th. The id map drops the taken prefix
  // before it on the way; the long flow and the running short one must still be found,
  // taken ones not.
  FlowNetwork net({1e9, 1e9});
  FlowId current = net.start(spec({1}, 1000), 0);
  FlowId lasting = -1;
  net.settle(0);
  for (int i = 1; i < 3000; ++i) {
    const auto t = *net.next_finish_ps();
    CHECK(t == 1'000'000 * static_cast<Picoseconds>(i));
    CHECK(net.take_finished(t) == std::vector<FlowId>{current});
    CHECK_FALSE(net.contains(current));
    if (i == 1500) lasting = net.start(spec({0}, 1e12), t);
    current = net.start(spec({1}, 1000), t);
    net.settle(t);
  }
  CHECK(lasting == 1500);
  CHECK(net.contains(lasting));
  CHECK(net.rate_bytes_per_s(lasting) == 1e9);
  CHECK(net.projected_finish_ps(lasting) ==
        1'500'000'000 + 1'000'000'000'000'000);  // + 1e12 B / 1e9 B/s
  CHECK(net.contains(current));
  CHECK(net.rate_bytes_per_s(current) == 1e9);
  CHECK_FALSE(net.contains(1));
  CHECK_FALSE(net.contains(2000));
  CHECK_THROWS_AS(net.rate_bytes_per_s(700), std::out_of_range);
  CHECK(net.active_flows() == 2);
}

TEST_CASE("network: the network is a value: a copy evolves independently and identically") {
  FlowNetwork net({1e9, 2e9});
  net.start(spec({0, 1}, 5000), 0);
  net.start(spec({1}, 7000), 0);
  net.settle(0);
  FlowNetwork copy = net;
  std::vector<std::vector<FlowId>> from_net;
  std::vector<std::vector<FlowId>> from_copy;
  for (FlowNetwork* n : {&net, &copy}) {
    auto& log = n == &net ? from_net : from_copy;
    n->start(spec({0}, 3000), 100);
    n->settle(100);
    while (auto t = n->next_finish_ps()) {
      log.push_back(n->take_finished(*t));
      log.back().push_back(*t);
      n->settle(*t);
    }
  }
  CHECK(from_net == from_copy);
  CHECK(from_net.size() >= 2);
}

TEST_CASE("network: invalid use is reported") {
  CHECK_THROWS_AS(FlowNetwork({1e9, 0.0}), std::invalid_argument);
  FlowNetwork net({1e9, 1e9});
  CHECK_THROWS_AS(net.start(spec({2}, 10), 0), std::invalid_argument);
  CHECK_THROWS_AS(net.start(spec({0, 1, 0}, 10), 0), std::invalid_argument);
  CHECK_THROWS_AS(net.start(spec({0}, 0.0), 0), std::invalid_argument);
  net.settle(100);
  CHECK_THROWS_AS(net.start(spec({0}, 10), 50), std::invalid_argument);
  CHECK_THROWS_AS(net.settle(99), std::invalid_argument);
  CHECK_THROWS_AS(net.rate_bytes_per_s(12345), std::out_of_range);
  CHECK_THROWS_AS(net.link_load_bytes_per_s(2), std::out_of_range);
  CHECK(net.link_count() == 2);
}
