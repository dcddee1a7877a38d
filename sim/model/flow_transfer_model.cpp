#include "sim/model/flow_transfer_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "sim/core/input_error.hpp"
#include "sim/model/collective_lanes.hpp"

namespace tilesim {
namespace {

std::vector<double> link_capacities(const Topology& topology, const CalibrationProfile& profile) {
  std::vector<double> caps(static_cast<std::size_t>(topology.link_count()));
  for (int l = 0; l < topology.link_count(); ++l) {
    const Link& link = topology.link(l);
    const LinkCost& cost = profile.link(link.cls);
    if (!cost.defined) {
      throw InputError(profile.source, 0, fmt::format("links.{}", to_string(link.cls)),
                       fmt::format("costs for link class {} (efficiency, alpha, flow_cap): "
                                   "topology '{}' has such links",
                                   to_string(link.cls), topology.name));
    }
    caps[static_cast<std::size_t>(l)] = link.bandwidth_bytes_per_s * cost.efficiency;
  }
  return caps;
}

}  // namespace

LinkClass alpha_class(const Topology& topology, const Route& route) {
  // Ranking of link classes for "the slowest class on a route".
  auto rank = [](LinkClass cls) {
    switch (cls) {
      case LinkClass::nvlink:
        return 0;
      case LinkClass::pcie:
        return 1;
      case LinkClass::upi:
        return 2;
      case LinkClass::ethernet:
        return 3;
      case LinkClass::ib:
        return 4;
    }
    return 0;
  };
  LinkClass slowest = LinkClass::nvlink;
  for (LinkId l : route.links) {
    if (rank(topology.link(l).cls) > rank(slowest)) slowest = topology.link(l).cls;
  }
  return slowest;
}

FlowTransferModel::FlowTransferModel(const Topology& topology, const CalibrationProfile& profile,
                                     TransferCalendar& calendar, bool record_link_loads)
    : topology_(topology),
      profile_(profile),
      calendar_(calendar),
      record_link_loads_(record_link_loads),
      router_(topology),
      network_(link_capacities(topology, profile)),
      traffic_min_bytes_(profile.comm_slowdown_min_bytes),
      gpu_rate_bytes_per_s_(static_cast<std::size_t>(topology.gpu_count()), 0.0),
      gpu_traffic_bytes_per_s_(static_cast<std::size_t>(topology.gpu_count()), 0.0),
      gpu_traffic_flows_(static_cast<std::size_t>(topology.gpu_count()), 0),
      gpu_changed_(static_cast<std::size_t>(topology.gpu_count()), 0) {
  for (int l = 0; l < topology.link_count(); ++l) {
    const Device& from = topology.device(topology.link_source(l));
    if (from.kind != DeviceKind::gpu || from.gpu_index < 0) continue;
    const LinkCost& cost = profile.link(topology.link(l).cls);
    double rate = topology.link(l).bandwidth_bytes_per_s * cost.efficiency;
    if (cost.flow_cap_bytes_per_s > 0) rate = std::min(rate, cost.flow_cap_bytes_per_s);
    double& best = gpu_rate_bytes_per_s_[static_cast<std::size_t>(from.gpu_index)];
    best = std::max(best, rate);
  }
}

const FlowTransferModel::RouteFacts& FlowTransferModel::facts_of(int src_gpu, int dst_gpu) {
  const std::int64_t key = static_cast<std::int64_t>(src_gpu) * topology_.gpu_count() + dst_gpu;
  const auto found = route_facts_.find(key);
  if (found != route_facts_.end()) return found->second;
  return add_facts(key, router_.find_route(src_gpu, dst_gpu), src_gpu, dst_gpu);
}

const FlowTransferModel::RouteFacts& FlowTransferModel::lane_facts_of(int src_gpu, int dst_gpu,
                                                                      int lane, int src_lane_gpu,
                                                                      int dst_lane_gpu) {
  const std::int64_t gpus = topology_.gpu_count();
  const std::int64_t key = ((lane + 1) * gpus + src_gpu) * gpus + dst_gpu;
  const auto found = route_facts_.find(key);
  if (found != route_facts_.end()) return found->second;
  return add_facts(key,
                   collective_lane_route(router_, src_gpu, src_lane_gpu, dst_lane_gpu, dst_gpu),
                   src_gpu, dst_gpu);
}

const FlowTransferModel::RouteFacts& FlowTransferModel::add_facts(std::int64_t key,
                                                                  const Route& route, int src_gpu,
                                                                  int dst_gpu) {
  RouteFacts facts;
  facts.alpha_s = profile_.link(alpha_class(topology_, route)).alpha_s;
  facts.latency_ps = route.latency_ps;
  for (LinkId l : route.links) {
    const double c = profile_.link(topology_.link(l).cls).flow_cap_bytes_per_s;
    if (c > 0 && (facts.rate_cap_bytes_per_s == 0.0 || c < facts.rate_cap_bytes_per_s)) {
      facts.rate_cap_bytes_per_s = c;
    }
  }
  facts.begin = fact_ints_.size();
  fact_ints_.insert(fact_ints_.end(), route.links.begin(), route.links.end());
  facts.route_links = static_cast<std::uint32_t>(route.links.size());
  if (symmetry_ != nullptr && !route.links.empty()) {
    FlowSpec spec;
    spec.links.assign(route.links.begin(), route.links.end());
    fold_onto_classes(spec);
    fact_ints_.insert(fact_ints_.end(), spec.links.begin(), spec.links.end());
    fact_ints_.insert(fact_ints_.end(), spec.link_multiplicity.begin(),
                      spec.link_multiplicity.end());
    facts.flow_links = static_cast<std::uint32_t>(spec.links.size());
  }
  std::vector<int> loaded;
  gpus_of(route, src_gpu, dst_gpu, loaded);
  fact_ints_.insert(fact_ints_.end(), loaded.begin(), loaded.end());
  facts.gpus = static_cast<std::uint32_t>(loaded.size());
  return route_facts_.emplace(key, facts).first->second;
}

std::span<const int> FlowTransferModel::route_links(const RouteFacts& facts) const {
  return {fact_ints_.data() + facts.begin, facts.route_links};
}

std::span<const int> FlowTransferModel::flow_links(const RouteFacts& facts) const {
  if (facts.flow_links == 0) return route_links(facts);
  return {fact_ints_.data() + facts.begin + facts.route_links, facts.flow_links};
}

std::span<const int> FlowTransferModel::link_multiplicity(const RouteFacts& facts) const {
  return {fact_ints_.data() + facts.begin + facts.route_links + facts.flow_links, facts.flow_links};
}

std::span<const int> FlowTransferModel::gpus(const RouteFacts& facts) const {
  return {fact_ints_.data() + facts.begin + facts.route_links + 2 * std::size_t{facts.flow_links},
          facts.gpus};
}

TransferId FlowTransferModel::post(const TransferRequest& request, Picoseconds now) {
  const TransferId id = next_id_++;
  const int src = request.src_gpu;
  const int dst = request.dst_gpu;
  const std::vector<int>* src_lanes = nullptr;
  const std::vector<int>* dst_lanes = nullptr;
  int lanes = 1;
  bool same_node = true;
  if (request.collective && !lanes_by_gpu_.empty() && src != dst) {
    src_lanes = &lanes_by_gpu_.at(static_cast<std::size_t>(src));
    dst_lanes = &lanes_by_gpu_.at(static_cast<std::size_t>(dst));
    same_node = topology_.node_of_gpu(src) == topology_.node_of_gpu(dst);
    lanes = std::max<int>(
        1, static_cast<int>(same_node ? src_lanes->size()
                                      : std::min(src_lanes->size(), dst_lanes->size())));
  }
  // Lanes inside a node are identical flows: one part standing for all of them.
  const int parts = same_node ? 1 : lanes;
  if (parts > 1) parts_left_.emplace(id, parts);
  for (int lane = 0; lane < parts; ++lane) {
    const RouteFacts& facts =
        parts == 1 ? facts_of(src, dst)
                   : lane_facts_of(src, dst, lane, (*src_lanes)[static_cast<std::size_t>(lane)],
                                   (*dst_lanes)[static_cast<std::size_t>(lane)]);
    const std::int64_t part = lane == 0 ? id : -(++next_extra_part_);
    in_flight_.emplace(part, InFlight{id, &facts, src, dst, request.bytes / lanes,
                                      Phase::software_latency, 0.0, lanes / parts});
    calendar_.wake_at(later_ps(now, s_to_ps(facts.alpha_s)), part);
  }
  return id;
}

void FlowTransferModel::finish_part(TransferId transfer) {
  if (const auto it = parts_left_.find(transfer); it != parts_left_.end()) {
    if (--it->second > 0) return;
    parts_left_.erase(it);
  }
  completed_.push_back(transfer);
}

void FlowTransferModel::wake(std::int64_t token, Picoseconds now) {
  const auto it = in_flight_.find(token);
  if (it == in_flight_.end()) throw std::logic_error("FlowTransferModel: wake of no transfer");
  if (it->second.phase == Phase::software_latency) {
    start_flow(token, it->second, now);
  } else if (it->second.phase == Phase::propagation) {
    const TransferId transfer = it->second.transfer;
    in_flight_.erase(it);
    finish_part(transfer);
  }
}

void FlowTransferModel::start_flow(TransferId id, InFlight& transfer, Picoseconds now) {
  if (transfer.bytes <= 0.0) {
    begin_propagation(id, transfer, now);
    return;
  }
  FlowSpec spec;
  const std::span<const int> links = flow_links(*transfer.facts);
  const std::span<const int> multiplicity = link_multiplicity(*transfer.facts);
  spec.links.assign(links.begin(), links.end());
  spec.link_multiplicity.assign(multiplicity.begin(), multiplicity.end());
  if (transfer.copies > 1) {
    if (spec.link_multiplicity.empty()) spec.link_multiplicity.assign(spec.links.size(), 1);
    for (int& k : spec.link_multiplicity) k *= transfer.copies;
  }
  spec.bytes = transfer.bytes;
  spec.rate_cap_bytes_per_s = transfer.facts->rate_cap_bytes_per_s;
  if (record_link_loads_) {
    touched_links_.insert(touched_links_.end(), spec.links.begin(), spec.links.end());
  }
  transfer.phase = Phase::flowing;
  transfer_of_flow_[network_.start(std::move(spec), now)] = id;
}

void FlowTransferModel::fold_onto_classes(FlowSpec& spec) const {
  std::vector<int> links;
  std::vector<int> counts;
  for (int l : spec.links) {
    const int c = symmetry_->link_canonical[static_cast<std::size_t>(l)];
    if (c < 0) throw std::logic_error("symmetric flow over a link outside the ring's routes");
    const auto at = std::find(links.begin(), links.end(), c);
    if (at == links.end()) {
      links.push_back(c);
      counts.push_back(1);
    } else {
      ++counts[static_cast<std::size_t>(at - links.begin())];
    }
  }
  spec.link_multiplicity.clear();
  for (std::size_t i = 0; i < links.size(); ++i) {
    const int orbit = symmetry_->link_orbit_size[static_cast<std::size_t>(links[i])];
    spec.link_multiplicity.push_back(symmetry_->copies() / orbit * counts[i]);
  }
  spec.links = std::move(links);
}

void FlowTransferModel::begin_propagation(TransferId id, InFlight& transfer, Picoseconds now) {
  transfer.phase = Phase::propagation;
  calendar_.wake_at(later_ps(now, transfer.facts->latency_ps), id);
}

void FlowTransferModel::settle(Picoseconds now) {
  network_.settle(now);
  for (FlowId flow : network_.rerated_flows()) {
    InFlight& transfer = in_flight_.at(transfer_of_flow_.at(flow));
    if (transfer.bytes < traffic_min_bytes_) continue;  // latency-bound: loads nothing
    const double rate = network_.rate_bytes_per_s(flow);
    // An instant copy moves nothing; a part standing for n lanes moves n times its rate.
    count_traffic(transfer, std::isinf(rate) ? 0.0 : rate * transfer.copies);
  }
}

void FlowTransferModel::gpus_of(const Route& route, int src_gpu, int dst_gpu,
                                std::vector<int>& out) const {
  out.clear();
  out.push_back(src_gpu);
  out.push_back(dst_gpu);
  for (LinkId l : route.links) {
    const Device& relay = topology_.device(topology_.link_target(l));
    if (relay.kind == DeviceKind::gpu && relay.gpu_index >= 0) out.push_back(relay.gpu_index);
  }
  if (symmetry_ != nullptr) {
    // Each GPU of the route stands for its orbit's representative, which carries this flow's
    // class once per GPU of the route in its orbit: no de-duplication after mapping.
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    for (int& gpu : out) gpu = symmetry_->gpu_canonical[static_cast<std::size_t>(gpu)];
    return;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void FlowTransferModel::count_traffic(InFlight& transfer, double rate_bytes_per_s) {
  const double old_rate = transfer.counted_rate_bytes_per_s;
  if (rate_bytes_per_s == old_rate) return;
  transfer.counted_rate_bytes_per_s = rate_bytes_per_s;
  for (int gpu : gpus(*transfer.facts)) {
    const auto g = static_cast<std::size_t>(gpu);
    gpu_traffic_flows_[g] += (rate_bytes_per_s > 0 ? 1 : 0) - (old_rate > 0 ? 1 : 0);
    // Exactly 0 when no flow is left, whatever rounding the differences left behind.
    gpu_traffic_bytes_per_s_[g] = gpu_traffic_flows_[g] == 0
                                      ? 0.0
                                      : gpu_traffic_bytes_per_s_[g] + (rate_bytes_per_s - old_rate);
    if (!gpu_changed_[g]) {
      gpu_changed_[g] = 1;
      changed_gpus_.push_back(gpu);
    }
  }
}

double FlowTransferModel::gpu_traffic_share(int gpu) const {
  const auto g = static_cast<std::size_t>(gpu);
  const double traffic = gpu_traffic_bytes_per_s_[g];
  if (!(traffic > 0.0)) return 0.0;
  const double rate = gpu_rate_bytes_per_s_[g];
  return rate > 0.0 ? std::min(1.0, traffic / rate) : 1.0;
}

void FlowTransferModel::take_gpus_with_changed_traffic(std::vector<int>& out) {
  out = std::move(changed_gpus_);
  changed_gpus_.clear();
  for (int gpu : out) gpu_changed_[static_cast<std::size_t>(gpu)] = 0;
  std::sort(out.begin(), out.end());
}

std::optional<Picoseconds> FlowTransferModel::next_change_ps() const {
  return network_.next_finish_ps();
}

void FlowTransferModel::advance(Picoseconds now) {
  for (FlowId flow : network_.take_finished(now)) {
    const auto it = transfer_of_flow_.find(flow);
    const TransferId id = it->second;
    transfer_of_flow_.erase(it);
    InFlight& transfer = in_flight_.at(id);
    count_traffic(transfer, 0.0);
    if (record_link_loads_) {
      const std::span<const int> links = route_links(*transfer.facts);
      touched_links_.insert(touched_links_.end(), links.begin(), links.end());
    }
    begin_propagation(id, transfer, now);
  }
}

void FlowTransferModel::take_completed(std::vector<TransferId>& out) {
  out.insert(out.end(), completed_.begin(), completed_.end());
  completed_.clear();
}

int FlowTransferModel::link_count() const { return topology_.link_count(); }

void FlowTransferModel::take_links_to_sample(std::vector<int>& out) {
  // A rate change can ripple through every flow that shares a link with a touched one, so
  // the links of all active flows may have changed too.
  out = std::move(touched_links_);
  touched_links_.clear();
  for (const auto& [flow, id] : transfer_of_flow_) {
    (void)flow;
    const std::span<const int> links = route_links(*in_flight_.at(id).facts);
    out.insert(out.end(), links.begin(), links.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

double FlowTransferModel::link_load_bytes_per_s(int link) const {
  return network_.link_load_bytes_per_s(link);
}

}  // namespace tilesim
