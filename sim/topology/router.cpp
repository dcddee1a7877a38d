// Router: cheapest GPU-to-GPU paths under the cost (latency sum, hop count),
// ties broken at the first differing vertex in vertex-id order with the members of
// each spread group ranked from the destination (d-mod-k). See topology.hpp for the rule.
#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim {
namespace {

constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;
constexpr std::uint32_t kNoLink = std::numeric_limits<std::uint32_t>::max();

// Builds a compressed adjacency (begin offsets + link ids) keyed by `key`.
void build_csr(std::size_t vertices, const std::vector<std::uint32_t>& key,
               std::vector<std::uint32_t>& begin, std::vector<std::uint32_t>& links) {
  begin.assign(vertices + 1, 0);
  for (auto v : key) ++begin[v + 1];
  for (std::size_t v = 0; v < vertices; ++v) begin[v + 1] += begin[v];
  links.assign(key.size(), 0);
  std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
  for (std::uint32_t l = 0; l < key.size(); ++l) links[fill[key[l]]++] = l;  // ascending ids
}

// Cost of the smallest entry of a min-heap of (cost, vertex), kInfinity if empty.
template <typename Entry>
std::int64_t top_cost(const std::vector<Entry>& heap) {
  return heap.empty() ? kInfinity : heap.front().first;
}

// The route cache's key of a GPU pair; throws std::out_of_range for an index outside the GPUs.
std::uint64_t pair_key(int src_gpu, int dst_gpu, int gpus) {
  if (src_gpu < 0 || src_gpu >= gpus || dst_gpu < 0 || dst_gpu >= gpus) {
    throw std::out_of_range("Router::route: GPU index out of range");
  }
  return (static_cast<std::uint64_t>(src_gpu) << 32) | static_cast<std::uint32_t>(dst_gpu);
}

// Pops the smallest (cost, vertex) entry of a min-heap.
template <typename Entry>
Entry pop_min(std::vector<Entry>& heap) {
  std::pop_heap(heap.begin(), heap.end(), std::greater<>());
  const Entry top = heap.back();
  heap.pop_back();
  return top;
}

}  // namespace

Router::Router(const Topology& topology) : topology_(&topology) {
  const auto vertices = static_cast<std::size_t>(topology.device_count());
  const auto links = static_cast<std::size_t>(topology.link_count());
  link_source_.resize(links);
  link_target_.resize(links);
  link_key_.resize(links);
  for (std::size_t l = 0; l < links; ++l) {
    const auto id = static_cast<LinkId>(l);
    link_source_[l] = static_cast<std::uint32_t>(topology.link_source(id));
    link_target_[l] = static_cast<std::uint32_t>(topology.link_target(id));
    link_key_[l] = (topology.link(id).latency_ps << kHopBits) + 1;
  }
  build_csr(vertices, link_source_, out_begin_, out_links_);
  build_csr(vertices, link_target_, in_begin_, in_links_);
  vertex_group_.assign(vertices, VertexGroup{});
  const auto& groups = topology.spread_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<std::uint32_t> ids;
    for (std::size_t i = 0; i < groups[g].members.size(); ++i) {
      const VertexId v = groups[g].members[i];
      vertex_group_[v] = VertexGroup{static_cast<std::int32_t>(g), static_cast<std::int32_t>(i)};
      ids.push_back(static_cast<std::uint32_t>(v));
    }
    std::sort(ids.begin(), ids.end());
    group_ids_.push_back(std::move(ids));
  }
  for (Search* s : {&forward_, &backward_}) {
    s->dist.resize(vertices);
    s->seen.assign(vertices, 0);
    s->settled.assign(vertices, 0);
  }
  decided_.assign(vertices, 0);
  on_path_.assign(vertices, 0);
  searches_to_.assign(static_cast<std::size_t>(topology.gpu_count()), 0);
}

void Router::reset(Search& search, std::uint32_t origin) {
  search.heap.clear();
  search.dist[origin] = 0;
  search.seen[origin] = generation_;
  search.heap.emplace_back(0, origin);
}

Router::Key Router::expand(Search& self, bool forward, std::uint32_t v, Key key,
                           const Search& other) {
  const auto& begin = forward ? out_begin_ : in_begin_;
  const auto& links = forward ? out_links_ : in_links_;
  const auto& far_end = forward ? link_target_ : link_source_;
  Key meeting = kInfinity;
  for (std::uint32_t i = begin[v]; i < begin[v + 1]; ++i) {
    const std::uint32_t l = links[i];
    const std::uint32_t u = far_end[l];
    if (self.settled[u] == generation_) continue;
    const Key candidate = key + link_key_[l];
    if (self.seen[u] != generation_ || candidate < self.dist[u]) {
      self.seen[u] = generation_;
      self.dist[u] = candidate;
      self.heap.emplace_back(candidate, u);
      std::push_heap(self.heap.begin(), self.heap.end(), std::greater<>());
    }
    if (other.seen[u] == generation_) meeting = std::min(meeting, candidate + other.dist[u]);
  }
  return meeting;
}

// Bidirectional Dijkstra: returns the cheapest cost from src to dst (kInfinity
// if none). Stops when the two frontiers' keys add up to at least the best
// meeting cost found, the classic exact stopping rule; an exhausted frontier
// counts as kInfinity, so this also ends the search when dst is unreachable.
Router::Key Router::shortest() {
  Key best = kInfinity;
  while (true) {
    const Key top_forward = top_cost(forward_.heap);
    const Key top_backward = top_cost(backward_.heap);
    if (top_forward + top_backward >= best) break;
    const bool go_forward = top_forward <= top_backward;
    Search& self = go_forward ? forward_ : backward_;
    const auto [key, v] = pop_min(self.heap);
    if (self.settled[v] == generation_ || key != self.dist[v]) continue;  // stale
    self.settled[v] = generation_;
    best = std::min(best, expand(self, go_forward, v, key, go_forward ? backward_ : forward_));
  }
  return best;
}

// Decides b(v) <= budget, b the cost from v to dst, where a path from src reaches v at cost
// c = D - budget (D the cheapest cost), from what the bidirectional phase left. A settled
// cost is exact, and so is a tentative one equal to its heap's smallest key (every unsettled
// vertex costs at least that key: the first unsettled vertex of its cheapest path is seen at
// its exact cost); any tentative cost is an upper bound. Since f(v) + b(v) >= D, b(v) <=
// budget needs c = f(v), the cost from src: a vertex the forward search holds at exactly c,
// for c below both heaps' key sum D - top_b <= top_f. Otherwise b(v) = min over out-links
// (link + b(target)), recursively: every step raises c, so the recursion visits each
// vertex of the forward search's ball once and remembers the answer.
bool Router::within(std::uint32_t v, Key budget) {
  if (budget < 0) return false;
  const Search& b = backward_;
  if (b.seen[v] == generation_) {
    if (b.settled[v] == generation_ || b.dist[v] <= backward_top_) return b.dist[v] <= budget;
    if (b.dist[v] <= budget) return true;  // a path of that cost exists
  }
  if (budget < backward_top_) return false;
  if (forward_.seen[v] != generation_ || forward_.dist[v] != cheapest_ - budget) return false;
  if (decided_[v] == generation_) return on_path_[v] != 0;
  bool held = false;
  for (std::uint32_t i = out_begin_[v]; i < out_begin_[v + 1] && !held; ++i) {
    const std::uint32_t l = out_links_[i];
    held = within(link_target_[l], budget - link_key_[l]);
  }
  decided_[v] = generation_;
  on_path_[v] = held ? 1 : 0;
  return held;
}

// From u at cost `remaining` = b(u) from dst, the out-link on the route: the far end v with
// b(v) = remaining - link (a cheapest path continues through it; b(v) is never less) that
// comes first in order(), the smallest link id among parallel ones, as next_link() chooses.
std::uint32_t Router::next_link_within(std::uint32_t u, Key remaining, Destination to) {
  std::uint32_t best_link = kNoLink;
  std::uint32_t best_order = 0;
  for (std::uint32_t i = out_begin_[u]; i < out_begin_[u + 1]; ++i) {
    const std::uint32_t l = out_links_[i];
    const std::uint32_t v = link_target_[l];
    const std::uint32_t rank = order(v, to);
    if (best_link != kNoLink && rank >= best_order) continue;  // cannot come first
    if (within(v, remaining - link_key_[l])) {
      best_order = rank;
      best_link = l;
    }
  }
  return best_link;
}

Route Router::walk_within(std::uint32_t src, std::uint32_t dst, Key cheapest, Destination to) {
  backward_top_ = top_cost(backward_.heap);
  cheapest_ = cheapest;
  Route route;
  route.latency_ps = cheapest >> kHopBits;
  route.links.reserve(static_cast<std::size_t>(cheapest & ((Key{1} << kHopBits) - 1)));
  Key remaining = cheapest;
  for (std::uint32_t u = src; u != dst;) {
    const std::uint32_t l = next_link_within(u, remaining, to);
    if (l == kNoLink) throw std::logic_error("Router: inconsistent search state");
    route.links.push_back(static_cast<LinkId>(l));
    remaining -= link_key_[l];
    u = link_target_[l];
  }
  return route;
}

// build_tree's walk reads the whole backward search: every cost exact, the same choices as
// next_link_within's.
void Router::settle_all() {
  Search& b = backward_;
  while (!b.heap.empty()) {
    const auto [key, v] = pop_min(b.heap);
    if (b.settled[v] == generation_ || key != b.dist[v]) continue;  // stale
    b.settled[v] = generation_;
    expand(b, /*forward=*/false, v, key, forward_);
  }
}

Router::Destination Router::destination_of(std::uint32_t dst) const {
  const Device& device = topology_->device(dst);
  const int per_node = topology_->gpus_per_node;
  return Destination{device.node,
                     per_node > 0 && device.gpu_index >= 0 ? device.gpu_index % per_node : 0};
}

std::uint32_t Router::order(std::uint32_t v, Destination to) const {
  const VertexGroup place = vertex_group_[v];
  if (place.group < 0) return v;
  const auto& ids = group_ids_[static_cast<std::size_t>(place.group)];
  const Topology::SpreadGroup& group =
      topology_->spread_groups()[static_cast<std::size_t>(place.group)];
  const auto size = static_cast<std::int64_t>(ids.size());
  std::int64_t turn = to.node / group.node_stride;
  if (group.lanes > 0) turn = turn * group.lanes + to.lane % group.lanes;
  const std::int64_t rotation = (turn % size + size) % size;
  return ids[static_cast<std::size_t>((place.index + size - rotation) % size)];
}

std::uint32_t Router::next_link(std::uint32_t u, Destination to) const {
  const Search& b = backward_;
  std::uint32_t best_link = kNoLink;
  std::uint32_t best_order = 0;
  for (std::uint32_t i = out_begin_[u]; i < out_begin_[u + 1]; ++i) {
    const std::uint32_t l = out_links_[i];
    const std::uint32_t v = link_target_[l];
    if (b.settled[v] != generation_ || b.dist[v] + link_key_[l] != b.dist[u]) continue;
    // Strictly smaller: of parallel links to one vertex the first (smallest id) stays.
    if (best_link == kNoLink || order(v, to) < best_order) {
      best_order = order(v, to);
      best_link = l;
    }
  }
  return best_link;
}

std::vector<std::uint32_t> Router::build_tree(std::uint32_t dst) {
  const Destination to = destination_of(dst);
  next_generation();
  reset(backward_, dst);
  settle_all();
  std::vector<std::uint32_t> tree(backward_.dist.size(), kNoLink);
  for (std::uint32_t u = 0; u < tree.size(); ++u) {
    if (u != dst && backward_.settled[u] == generation_) tree[u] = next_link(u, to);
  }
  return tree;
}

Route Router::walk_tree(const std::vector<std::uint32_t>& tree, std::uint32_t src,
                        std::uint32_t dst, int src_gpu, int dst_gpu) const {
  Route route;
  for (std::uint32_t u = src; u != dst; u = link_target_[route.links.back()]) {
    const std::uint32_t l = tree[u];
    if (l == kNoLink) {
      throw std::runtime_error("Router: no path from GPU " + std::to_string(src_gpu) + " to GPU " +
                               std::to_string(dst_gpu));
    }
    route.links.push_back(static_cast<LinkId>(l));
    route.latency_ps += link_key_[l] >> kHopBits;
  }
  return route;
}

const std::vector<std::uint32_t>* Router::tree_to(int dst_gpu, std::uint32_t dst) {
  if (auto it = trees_.find(dst_gpu); it != trees_.end()) return &it->second;
  const std::size_t bytes = backward_.dist.size() * sizeof(std::uint32_t);
  if (++searches_to_[static_cast<std::size_t>(dst_gpu)] < kTreeAfterSearches ||
      tree_bytes_ + bytes > kMaxTreeBytes) {
    return nullptr;
  }
  tree_bytes_ += bytes;
  return &trees_.emplace(dst_gpu, build_tree(dst)).first->second;
}

const Route& Router::route(int src_gpu, int dst_gpu) {
  const std::uint64_t key = pair_key(src_gpu, dst_gpu, topology_->gpu_count());
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  return cache_.emplace(key, find_route(src_gpu, dst_gpu)).first->second;
}

Route Router::find_route(int src_gpu, int dst_gpu) {
  pair_key(src_gpu, dst_gpu, topology_->gpu_count());
  const auto src = static_cast<std::uint32_t>(topology_->gpu_vertex(src_gpu));
  const auto dst = static_cast<std::uint32_t>(topology_->gpu_vertex(dst_gpu));
  if (src == dst) return Route{};
  if (const auto* tree = tree_to(dst_gpu, dst)) return walk_tree(*tree, src, dst, src_gpu, dst_gpu);
  next_generation();
  reset(forward_, src);
  reset(backward_, dst);
  const Key cheapest = shortest();
  if (cheapest >= kInfinity) {
    throw std::runtime_error("Router: no path from GPU " + std::to_string(src_gpu) + " to GPU " +
                             std::to_string(dst_gpu));
  }
  return walk_within(src, dst, cheapest, destination_of(dst));
}

void Router::next_generation() {
  if (++generation_ == 0) {  // wrapped: clear the stamps once every 2^32 queries
    for (Search* s : {&forward_, &backward_}) {
      std::fill(s->seen.begin(), s->seen.end(), 0);
      std::fill(s->settled.begin(), s->settled.end(), 0);
    }
    std::fill(decided_.begin(), decided_.end(), 0);
    generation_ = 1;
  }
}

std::vector<Route> Router::routes_to(int dst_gpu, const std::vector<int>& src_gpus) {
  const int gpus = topology_->gpu_count();
  pair_key(dst_gpu, dst_gpu, gpus);  // checks dst_gpu even when src_gpus is empty
  std::vector<Route> routes;
  routes.reserve(src_gpus.size());
  if (src_gpus.size() < kTreeAfterSearches) {  // too few to pay for a whole-graph search
    for (int src_gpu : src_gpus) routes.push_back(route(src_gpu, dst_gpu));
    return routes;
  }
  const auto dst = static_cast<std::uint32_t>(topology_->gpu_vertex(dst_gpu));
  // The stored tree if there is one, else one built for this call (and dropped after it).
  std::vector<std::uint32_t> own_tree;
  const std::vector<std::uint32_t>* tree = nullptr;
  if (auto it = trees_.find(dst_gpu); it != trees_.end()) tree = &it->second;
  for (int src_gpu : src_gpus) {
    pair_key(src_gpu, dst_gpu, gpus);
    const auto src = static_cast<std::uint32_t>(topology_->gpu_vertex(src_gpu));
    if (src == dst) {
      routes.emplace_back();
      continue;
    }
    if (tree == nullptr) {
      own_tree = build_tree(dst);
      tree = &own_tree;
    }
    routes.push_back(walk_tree(*tree, src, dst, src_gpu, dst_gpu));
  }
  return routes;
}

}  // namespace tilesim
