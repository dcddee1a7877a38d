// Topology builder and Router on hand-built graphs: cost order, tie-break,
// caching and determinism.
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "sim/topology/topology.hpp"
#include "test_topology_helpers.hpp"

using namespace tilesim;
using tilesim::test::route_names;

namespace {
VertexId gpu(Topology& t, const std::string& name) {
  return t.add_device({name, DeviceKind::gpu, 0, -1});
}
VertexId sw(Topology& t, const std::string& name) {
  return t.add_device({name, DeviceKind::nvswitch, 0, -1});
}
}  // namespace

TEST_CASE("topology: connect adds two directed links with consecutive ids", "[topology]") {
  Topology t;
  const VertexId a = gpu(t, "a");
  const VertexId s = sw(t, "s");
  const VertexId b = gpu(t, "b");
  CHECK(t.connect(a, s, 100e9, 500'000, LinkClass::nvlink) == 0);
  CHECK(t.connect(s, b, 50e9, 1'000'000, LinkClass::pcie) == 2);
  REQUIRE(t.link_count() == 4);
  CHECK(t.link_source(0) == a);
  CHECK(t.link_target(0) == s);
  CHECK(t.link_source(1) == s);
  CHECK(t.link_target(1) == a);
  CHECK(t.link(3).bandwidth_bytes_per_s == 50e9);
  CHECK(t.link(3).cls == LinkClass::pcie);
  CHECK(t.link(3).id == 3);
  CHECK(t.gpu_count() == 2);
  CHECK(t.gpu_vertex(1) == b);
  CHECK(t.device(b).gpu_index == 1);
  CHECK(t.find_device("s") == s);
  CHECK_FALSE(t.find_device("nope").has_value());
  CHECK_THROWS_AS(t.connect(a, a, 1e9, 0, LinkClass::pcie), std::invalid_argument);
  CHECK_THROWS_AS(t.connect(a, b, 0.0, 0, LinkClass::pcie), std::invalid_argument);
}

TEST_CASE("topology: copies of a topology keep their links", "[topology]") {
  Topology t;
  const VertexId a = gpu(t, "a");
  const VertexId b = gpu(t, "b");
  t.connect(a, b, 10e9, 7, LinkClass::ib);
  Topology copy = t;
  Topology moved = std::move(t);
  CHECK(copy.link(1).latency_ps == 7);
  CHECK(moved.link_target(1) == a);
  Router router(copy);
  CHECK(router.route(0, 1).links == std::vector<LinkId>{0});
}

TEST_CASE("topology: router prefers lower latency over fewer hops", "[topology][router]") {
  Topology t;
  const VertexId a = gpu(t, "a");
  const VertexId b = gpu(t, "b");
  const VertexId s1 = sw(t, "s1");
  const VertexId s2 = sw(t, "s2");
  const VertexId s3 = sw(t, "s3");
  t.connect(a, s1, 1e9, 5'000, LinkClass::pcie);  // 2 hops, 10 ns
  t.connect(s1, b, 1e9, 5'000, LinkClass::pcie);
  const LinkId first = t.connect(a, s2, 1e9, 1'000, LinkClass::nvlink);  // 3 hops, 3 ns
  const LinkId second = t.connect(s2, s3, 1e9, 1'000, LinkClass::nvlink);
  const LinkId third = t.connect(s3, b, 1e9, 1'000, LinkClass::nvlink);
  Router router(t);
  const Route& r = router.route(0, 1);
  CHECK(r.links == std::vector<LinkId>{first, second, third});
  CHECK(r.latency_ps == 3'000);
  const Route& back = router.route(1, 0);
  CHECK(back.links == std::vector<LinkId>{third + 1, second + 1, first + 1});
}

TEST_CASE("topology: router breaks latency ties by hop count, then smallest vertex id",
          "[topology][router]") {
  Topology t;
  const VertexId a = gpu(t, "a");       // 0
  const VertexId b = gpu(t, "b");       // 1
  const VertexId high = sw(t, "high");  // 2
  const VertexId low = sw(t, "low");    // 3
  const VertexId x = sw(t, "x");        // 4
  // Path via `low` (id 3) and `high` (id 2) cost the same: `high` wins (smaller id).
  t.connect(a, low, 1e9, 1'000, LinkClass::nvlink);
  t.connect(low, b, 1e9, 1'000, LinkClass::nvlink);
  t.connect(a, high, 1e9, 1'000, LinkClass::nvlink);
  t.connect(high, b, 1e9, 1'000, LinkClass::nvlink);
  // Same latency through two zero-latency hops more: loses on hop count.
  t.connect(a, x, 1e9, 0, LinkClass::nvlink);
  t.connect(x, high, 1e9, 1'000, LinkClass::nvlink);
  Router router(t);
  CHECK(route_names(t, router.route(0, 1)) == std::vector<std::string>{"a", "high", "b"});
  CHECK(route_names(t, router.route(1, 0)) == std::vector<std::string>{"b", "high", "a"});
  CHECK(router.route(0, 0).links.empty());
  CHECK(router.cached_routes() == 3);
}

TEST_CASE("topology: router throws for unreachable and out-of-range GPUs", "[topology][router]") {
  Topology t;
  gpu(t, "a");
  gpu(t, "b");
  Router router(t);
  CHECK_THROWS_AS(router.route(0, 1), std::runtime_error);
  CHECK_THROWS_AS(router.route(0, 2), std::out_of_range);
  CHECK_THROWS_AS(router.route(-1, 0), std::out_of_range);
}

TEST_CASE("topology: a spread group takes switches not yet in a group", "[topology]") {
  Topology t;
  const VertexId a = gpu(t, "a");
  const VertexId s0 = sw(t, "s0");
  const VertexId s1 = sw(t, "s1");
  const VertexId s2 = sw(t, "s2");
  t.add_spread_group({s1, s0}, 1);
  REQUIRE(t.spread_groups().size() == 1);
  CHECK(t.spread_groups()[0].members == std::vector<VertexId>{s1, s0});
  CHECK_THROWS_AS(t.add_spread_group({s2, s1}), std::invalid_argument);  // s1 taken
  CHECK_THROWS_AS(t.add_spread_group({s2, s2}), std::invalid_argument);  // repeated
  CHECK_THROWS_AS(t.add_spread_group({a}), std::invalid_argument);       // not a switch
  CHECK_THROWS_AS(t.add_spread_group({99}), std::invalid_argument);
  CHECK_THROWS_AS(t.add_spread_group({}), std::invalid_argument);
  CHECK_THROWS_AS(t.add_spread_group({s2}, 0), std::invalid_argument);
  CHECK_THROWS_AS(t.add_spread_group({s2}, 1, -1), std::invalid_argument);
  t.add_spread_group({s2}, 3);
  const Topology copy = t;
  REQUIRE(copy.spread_groups().size() == 2);
  CHECK(copy.spread_groups()[1].node_stride == 3);
}

TEST_CASE("topology: router spreads spine ties by destination node", "[topology][router]") {
  // Two GPUs on node 0 and one on each of nodes 1..4, every GPU on its own leaf,
  // three spines over all leaves, marked out of id order: spine index 0 is s2.
  Topology t;
  std::vector<VertexId> leaves;
  for (int n = 0; n < 5; ++n) {
    const VertexId g = t.add_device({"g" + std::to_string(n), DeviceKind::gpu, n, -1});
    leaves.push_back(t.add_device({"l" + std::to_string(n), DeviceKind::ib_switch, -1, -1}));
    t.connect(g, leaves.back(), 1e9, 1'000, LinkClass::ib);
  }
  const VertexId extra = t.add_device({"g5", DeviceKind::gpu, 0, -1});
  t.connect(extra, leaves[1], 1e9, 1'000, LinkClass::ib);
  std::vector<VertexId> spines;
  for (const char* name : {"s0", "s1", "s2"}) {
    spines.push_back(t.add_device({name, DeviceKind::ib_switch, -1, -1}));
    for (VertexId leaf : leaves) t.connect(leaf, spines.back(), 1e9, 1'000, LinkClass::ib);
  }
  t.add_spread_group({spines[2], spines[0], spines[1]});
  Router router(t);
  // Spine index = destination node mod 3: node 1 -> index 1 (s0), node 2 -> s1,
  // node 3 -> index 0 (s2), node 4 -> s0, node 0 -> s2.
  CHECK(route_names(t, router.route(0, 1)) ==
        std::vector<std::string>{"g0", "l0", "s0", "l1", "g1"});
  CHECK(route_names(t, router.route(0, 2))[2] == "s1");
  CHECK(route_names(t, router.route(0, 3))[2] == "s2");
  CHECK(route_names(t, router.route(0, 4))[2] == "s0");
  CHECK(route_names(t, router.route(1, 0))[2] == "s2");
  // g5 is on node 0 behind leaf l1: the destination's node, not its leaf, picks.
  CHECK(route_names(t, router.route(2, 5))[2] == "s2");
  // Same leaf: no spine at all.
  CHECK(route_names(t, router.route(1, 5)) == std::vector<std::string>{"g1", "l1", "g5"});
}

namespace {
// Reference: full Dijkstra to dst with (latency, hops) costs by O(V^2)
// selection, then the walk that takes the first next vertex in the documented
// tie-break order (vertex id; in each spread group of S members and stride t, member
// (n / t + j) mod S takes the j-th smallest member id, n = the destination's node). No
// pruning, no heap.
std::vector<LinkId> reference_route(const Topology& t, VertexId src, VertexId dst) {
  const auto n = static_cast<std::size_t>(t.device_count());
  std::vector<VertexId> rank(n);  // tie-break position of each vertex
  for (VertexId v = 0; v < n; ++v) rank[v] = v;
  const int node = t.device(dst).node;
  for (const Topology::SpreadGroup& group : t.spread_groups()) {
    std::vector<VertexId> ids = group.members;
    std::sort(ids.begin(), ids.end());
    const int count = static_cast<int>(ids.size());
    const int rotation = node / group.node_stride;
    for (int j = 0; j < count; ++j) {
      rank[group.members[static_cast<std::size_t>(((rotation + j) % count + count) % count)]] =
          ids[static_cast<std::size_t>(j)];
    }
  }
  using Cost = std::pair<Picoseconds, int>;
  const Cost inf{std::numeric_limits<Picoseconds>::max(), 0};
  std::vector<Cost> dist(n, inf);
  std::vector<char> done(n, 0);
  dist[dst] = {0, 0};
  for (std::size_t round = 0; round < n; ++round) {
    std::size_t v = n;
    for (std::size_t u = 0; u < n; ++u) {
      if (!done[u] && dist[u] != inf && (v == n || dist[u] < dist[v])) v = u;
    }
    if (v == n) break;
    done[v] = 1;
    for (LinkId l = 0; l < t.link_count(); ++l) {
      if (t.link_target(l) != v) continue;
      const Cost c{dist[v].first + t.link(l).latency_ps, dist[v].second + 1};
      if (c < dist[t.link_source(l)]) dist[t.link_source(l)] = c;
    }
  }
  std::vector<LinkId> path;
  for (VertexId u = src; u != dst;) {
    LinkId best = -1;
    for (LinkId l = 0; l < t.link_count(); ++l) {
      if (t.link_source(l) != u) continue;
      const VertexId v = t.link_target(l);
      const Cost via{dist[v].first + t.link(l).latency_ps, dist[v].second + 1};
      if (dist[v] == inf || via != dist[u]) continue;
      if (best < 0 || rank[v] < rank[t.link_target(best)]) best = l;
    }
    path.push_back(best);
    u = t.link_target(best);
  }
  return path;
}
}  // namespace

namespace {
struct RandomGraphShape {
  int trials, gpus, switches, extra_links;
  unsigned latencies;  // link latencies 0 .. latencies - 1 ps
};
}  // namespace

TEST_CASE("topology: router matches a plain reference on random graphs with many ties",
          "[topology][router]") {
  // Small graphs with latencies 0-2 ps tie almost everywhere; the larger ones give the walk's
  // on-path check (Router::within) longer detours to refute, through zero-latency cycles.
  const auto shape =
      GENERATE(RandomGraphShape{80, 6, 10, 14, 3}, RandomGraphShape{30, 12, 48, 90, 4});
  std::mt19937 rng(12345);
  for (int trial = 0; trial < shape.trials; ++trial) {
    Topology t;
    const int gpus = shape.gpus;
    const int switches = shape.switches;
    // GPU i is on node i; odd trials make switches 7, 3, 5 (out of id order) a spread group
    // and every fourth trial also 8, 2 with stride 2.
    for (int i = 0; i < gpus; ++i) t.add_device({"g" + std::to_string(i), DeviceKind::gpu, i, -1});
    for (int i = 0; i < switches; ++i) sw(t, "s" + std::to_string(i));
    if (trial % 2 == 1) {
      t.add_spread_group({static_cast<VertexId>(gpus + 7), static_cast<VertexId>(gpus + 3),
                          static_cast<VertexId>(gpus + 5)});
    }
    if (trial % 4 == 3) {
      t.add_spread_group({static_cast<VertexId>(gpus + 8), static_cast<VertexId>(gpus + 2)}, 2);
    }
    const int vertices = gpus + switches;
    // A spanning chain keeps it connected; extra random links make ties.
    for (int v = 1; v < vertices; ++v) {
      const auto u = static_cast<VertexId>(rng() % static_cast<unsigned>(v));
      t.connect(u, static_cast<VertexId>(v), 1e9, static_cast<Picoseconds>(rng() % shape.latencies),
                LinkClass::pcie);
    }
    for (int extra = 0; extra < shape.extra_links; ++extra) {
      const auto a = static_cast<VertexId>(rng() % static_cast<unsigned>(vertices));
      const auto b = static_cast<VertexId>(rng() % static_cast<unsigned>(vertices));
      if (a != b) {
        t.connect(a, b, 1e9, static_cast<Picoseconds>(rng() % shape.latencies), LinkClass::pcie);
      }
    }
    Router router(t);
    for (int s = 0; s < gpus; ++s) {
      for (int d = 0; d < gpus; ++d) {
        if (s == d) continue;
        INFO("trial " << trial << " route " << s << " -> " << d);
        CHECK(router.route(s, d).links == reference_route(t, t.gpu_vertex(s), t.gpu_vertex(d)));
      }
    }
  }
}
