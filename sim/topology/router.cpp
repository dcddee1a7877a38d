// Router: cheapest GPU-to-GPU paths under the cost (latency sum, hop count,
// smallest vertex id at the first difference). See topology.hpp for the model.
#include <algorithm>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim {
namespace {

constexpr std::int64_t kInfinity = std::numeric_limits<std::int64_t>::max() / 4;

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
  for (Search* s : {&forward_, &backward_}) {
    s->dist.resize(vertices);
    s->seen.assign(vertices, 0);
    s->settled.assign(vertices, 0);
  }
}

void Router::reset(Search& search, std::uint32_t origin) {
  search.heap.clear();
  search.dist[origin] = 0;
  search.seen[origin] = generation_;
  search.heap.emplace_back(0, origin);
}

Router::Key Router::top(const Search& search) const {
  return search.heap.empty() ? kInfinity : search.heap.front().first;
}

// Bidirectional Dijkstra: returns the cheapest cost from src to dst (kInfinity
// if none). Stops when the two frontiers' keys add up to at least the best
// meeting cost found, the classic exact stopping rule.
Router::Key Router::shortest() {
  const auto greater = std::greater<std::pair<Key, std::uint32_t>>();
  Key best = kInfinity;
  while (true) {
    const Key top_forward = top(forward_);
    const Key top_backward = top(backward_);
    if (top_forward >= kInfinity && top_backward >= kInfinity) break;
    if (top_forward + top_backward >= best) break;
    const bool go_forward = top_forward <= top_backward;
    Search& self = go_forward ? forward_ : backward_;
    const Search& other = go_forward ? backward_ : forward_;
    std::pop_heap(self.heap.begin(), self.heap.end(), greater);
    const auto [key, v] = self.heap.back();
    self.heap.pop_back();
    if (self.settled[v] == generation_ || key != self.dist[v]) continue;  // stale
    self.settled[v] = generation_;
    const auto& begin = go_forward ? out_begin_ : in_begin_;
    const auto& links = go_forward ? out_links_ : in_links_;
    const auto& far_end = go_forward ? link_target_ : link_source_;
    for (std::uint32_t i = begin[v]; i < begin[v + 1]; ++i) {
      const std::uint32_t l = links[i];
      const std::uint32_t u = far_end[l];
      if (self.settled[u] == generation_) continue;
      const Key candidate = key + link_key_[l];
      if (self.seen[u] != generation_ || candidate < self.dist[u]) {
        self.seen[u] = generation_;
        self.dist[u] = candidate;
        self.heap.emplace_back(candidate, u);
        std::push_heap(self.heap.begin(), self.heap.end(), greater);
      }
      if (other.seen[u] == generation_) best = std::min(best, candidate + other.dist[u]);
    }
  }
  return best;
}

// Continues the backward search until src is settled, never settling a vertex
// v with lower_bound(src -> v) + cost(v -> dst) > cheapest: such a vertex is on
// no cheapest path, and every vertex that is keeps its exact cost-to-dst.
void Router::settle_source(std::uint32_t src, Key cheapest) {
  const auto greater = std::greater<std::pair<Key, std::uint32_t>>();
  const Key frontier = top(forward_);  // lower bound for vertices not settled forward
  auto lower_bound = [&](std::uint32_t v) {
    return forward_.settled[v] == generation_ ? forward_.dist[v] : frontier;
  };
  Search& b = backward_;
  while (b.settled[src] != generation_ && !b.heap.empty()) {
    std::pop_heap(b.heap.begin(), b.heap.end(), greater);
    const auto [key, v] = b.heap.back();
    b.heap.pop_back();
    if (b.settled[v] == generation_ || key != b.dist[v]) continue;
    if (lower_bound(v) >= kInfinity || lower_bound(v) + key > cheapest) continue;
    b.settled[v] = generation_;
    for (std::uint32_t i = in_begin_[v]; i < in_begin_[v + 1]; ++i) {
      const std::uint32_t l = in_links_[i];
      const std::uint32_t u = link_source_[l];
      if (b.settled[u] == generation_) continue;
      const Key candidate = key + link_key_[l];
      if (b.seen[u] != generation_ || candidate < b.dist[u]) {
        b.seen[u] = generation_;
        b.dist[u] = candidate;
        b.heap.emplace_back(candidate, u);
        std::push_heap(b.heap.begin(), b.heap.end(), greater);
      }
    }
  }
}

Route Router::walk(std::uint32_t src, std::uint32_t dst) const {
  const Search& b = backward_;
  Route route;
  route.latency_ps = b.dist[src] >> kHopBits;
  route.links.reserve(static_cast<std::size_t>(b.dist[src] & ((Key{1} << kHopBits) - 1)));
  std::uint32_t u = src;
  while (u != dst) {
    std::uint32_t best_link = 0;
    std::uint32_t best_vertex = 0;
    bool found = false;
    for (std::uint32_t i = out_begin_[u]; i < out_begin_[u + 1]; ++i) {
      const std::uint32_t l = out_links_[i];
      const std::uint32_t v = link_target_[l];
      if (b.settled[v] != generation_ || b.dist[v] + link_key_[l] != b.dist[u]) continue;
      if (!found || v < best_vertex) {  // links are in ascending id order
        found = true;
        best_vertex = v;
        best_link = l;
      }
    }
    if (!found) throw std::logic_error("Router: inconsistent search state");
    route.links.push_back(static_cast<LinkId>(best_link));
    u = best_vertex;
  }
  return route;
}

const Route& Router::route(int src_gpu, int dst_gpu) {
  const int gpus = topology_->gpu_count();
  if (src_gpu < 0 || src_gpu >= gpus || dst_gpu < 0 || dst_gpu >= gpus) {
    throw std::out_of_range("Router::route: GPU index out of range");
  }
  const std::uint64_t key =
      (static_cast<std::uint64_t>(src_gpu) << 32) | static_cast<std::uint32_t>(dst_gpu);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;

  const auto src = static_cast<std::uint32_t>(topology_->gpu_vertex(src_gpu));
  const auto dst = static_cast<std::uint32_t>(topology_->gpu_vertex(dst_gpu));
  if (src == dst) return cache_.emplace(key, Route{}).first->second;
  if (++generation_ == 0) {  // wrapped: clear the stamps once every 2^32 queries
    for (Search* s : {&forward_, &backward_}) {
      std::fill(s->seen.begin(), s->seen.end(), 0);
      std::fill(s->settled.begin(), s->settled.end(), 0);
    }
    generation_ = 1;
  }
  reset(forward_, src);
  reset(backward_, dst);
  const Key cheapest = shortest();
  if (cheapest >= kInfinity) {
    throw std::runtime_error("Router: no path from GPU " + std::to_string(src_gpu) + " to GPU " +
                             std::to_string(dst_gpu));
  }
  settle_source(src, cheapest);
  return cache_.emplace(key, walk(src, dst)).first->second;
}

}  // namespace tilesim
