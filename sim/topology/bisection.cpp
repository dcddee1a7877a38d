// Max flow over the topology with Boost's push-relabel algorithm.
#include "sim/topology/bisection.hpp"

#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace tilesim {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, std::int64_t,
        boost::property<boost::edge_residual_capacity_t, std::int64_t,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

void add_arc(FlowGraph& g, std::size_t u, std::size_t v, std::int64_t capacity) {
  auto cap = boost::get(boost::edge_capacity, g);
  auto rev = boost::get(boost::edge_reverse, g);
  const auto forward = boost::add_edge(u, v, g).first;
  const auto backward = boost::add_edge(v, u, g).first;
  cap[forward] = capacity;
  cap[backward] = 0;
  rev[forward] = backward;
  rev[backward] = forward;
}

}  // namespace

double max_flow_bytes_per_s(const Topology& topology, const std::vector<int>& from_gpus,
                            const std::vector<int>& to_gpus) {
  if (from_gpus.empty() || to_gpus.empty()) return 0.0;
  const auto devices = static_cast<std::size_t>(topology.device_count());
  const std::size_t source = devices;
  const std::size_t sink = devices + 1;
  FlowGraph g(devices + 2);
  // The source feeds each sending GPU at most what its out-links carry and the sink drains
  // each receiving GPU at most what its in-links carry: those arcs never bind, and the excess
  // push-relabel piles on one vertex stays below the sum of all link capacities. (One
  // "unbounded" arc per GPU of the sum of all links overflowed int64 once a few hundred GPUs'
  // excess met at a switch: UBSan, test_topology_summary under tools/sanitize.sh asan.)
  std::vector<std::int64_t> out_bytes_per_s(devices, 0);
  std::vector<std::int64_t> in_bytes_per_s(devices, 0);
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const auto capacity =
        static_cast<std::int64_t>(std::llround(topology.link(l).bandwidth_bytes_per_s));
    out_bytes_per_s[topology.link_source(l)] += capacity;
    in_bytes_per_s[topology.link_target(l)] += capacity;
    add_arc(g, topology.link_source(l), topology.link_target(l), capacity);
  }
  std::vector<char> in_from(static_cast<std::size_t>(topology.gpu_count()), 0);
  for (int gpu : from_gpus) in_from.at(static_cast<std::size_t>(gpu)) = 1;
  for (int gpu : from_gpus) {
    const auto v = topology.gpu_vertex(gpu);
    add_arc(g, source, v, out_bytes_per_s[v]);
  }
  for (int gpu : to_gpus) {
    if (in_from.at(static_cast<std::size_t>(gpu))) {
      throw std::invalid_argument("max_flow_bytes_per_s: GPU sets overlap");
    }
    const auto v = topology.gpu_vertex(gpu);
    add_arc(g, v, sink, in_bytes_per_s[v]);
  }
  const std::int64_t flow = boost::push_relabel_max_flow(g, source, sink);
  return static_cast<double>(flow);
}

double bisection_bytes_per_s(const Topology& topology) {
  const int gpus = topology.gpu_count();
  if (gpus < 2) return 0.0;
  std::vector<int> first;
  std::vector<int> second;
  for (int gpu = 0; gpu < gpus; ++gpu) (gpu < gpus / 2 ? first : second).push_back(gpu);
  return max_flow_bytes_per_s(topology, first, second);
}

}  // namespace tilesim
