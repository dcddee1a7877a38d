// Router: cheapest GPU-to-GPU paths under the cost (latency sum, hop count,
// smallest vertex id at the first difference). See topology.hpp for the model.
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim {
namespace {

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
  link_latency_ps_.resize(links);
  for (std::size_t l = 0; l < links; ++l) {
    const auto id = static_cast<LinkId>(l);
    link_source_[l] = static_cast<std::uint32_t>(topology.link_source(id));
    link_target_[l] = static_cast<std::uint32_t>(topology.link_target(id));
    link_latency_ps_[l] = topology.link(id).latency_ps;
  }
  build_csr(vertices, link_source_, out_begin_, out_links_);
  build_csr(vertices, link_target_, in_begin_, in_links_);
  dist_.resize(vertices);
  seen_gen_.assign(vertices, 0);
  settled_gen_.assign(vertices, 0);
}

void Router::start_search(std::uint32_t dst) {
  ++generation_;
  if (generation_ == 0) {  // wrapped: clear stamps once every 2^32 searches
    std::fill(seen_gen_.begin(), seen_gen_.end(), 0);
    std::fill(settled_gen_.begin(), settled_gen_.end(), 0);
    generation_ = 1;
  }
  heap_.clear();
  dist_[dst] = Cost{};
  seen_gen_[dst] = generation_;
  heap_.push_back(HeapEntry{Cost{}, dst});
  search_dst_ = dst;
}

void Router::search_until_settled(std::uint32_t src) {
  const auto greater = std::greater<HeapEntry>();
  while (!settled(src) && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), greater);
    const HeapEntry top = heap_.back();
    heap_.pop_back();
    const std::uint32_t v = top.vertex;
    if (settled(v) || top.cost != dist_[v]) continue;  // stale entry
    settled_gen_[v] = generation_;
    // Relax every link u -> v: reaching the destination from u via v.
    for (std::uint32_t i = in_begin_[v]; i < in_begin_[v + 1]; ++i) {
      const std::uint32_t l = in_links_[i];
      const std::uint32_t u = link_source_[l];
      if (settled(u)) continue;
      const Cost candidate{top.cost.latency_ps + link_latency_ps_[l], top.cost.hops + 1};
      if (seen_gen_[u] != generation_ || candidate < dist_[u]) {
        seen_gen_[u] = generation_;
        dist_[u] = candidate;
        heap_.push_back(HeapEntry{candidate, u});
        std::push_heap(heap_.begin(), heap_.end(), greater);
      }
    }
  }
}

Route Router::walk(std::uint32_t src, std::uint32_t dst) const {
  Route route;
  route.latency_ps = dist_[src].latency_ps;
  route.links.reserve(static_cast<std::size_t>(dist_[src].hops));
  std::uint32_t u = src;
  while (u != dst) {
    std::uint32_t best_link = 0;
    std::uint32_t best_vertex = 0;
    bool found = false;
    for (std::uint32_t i = out_begin_[u]; i < out_begin_[u + 1]; ++i) {
      const std::uint32_t l = out_links_[i];
      const std::uint32_t v = link_target_[l];
      if (!settled(v)) continue;
      const Cost via{dist_[v].latency_ps + link_latency_ps_[l], dist_[v].hops + 1};
      if (via != dist_[u]) continue;
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
  if (search_dst_ != dst) start_search(dst);
  search_until_settled(src);
  if (!settled(src)) {
    throw std::runtime_error("Router: no path from GPU " + std::to_string(src_gpu) + " to GPU " +
                             std::to_string(dst_gpu));
  }
  return cache_.emplace(key, walk(src, dst)).first->second;
}

}  // namespace tilesim
