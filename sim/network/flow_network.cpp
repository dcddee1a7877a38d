#include "sim/network/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tilesim {

namespace {

// True when the route names some link twice (routes are short: a few hops).
bool has_repeated_link(const std::vector<int>& links) {
  for (std::size_t i = 0; i < links.size(); ++i) {
    for (std::size_t j = i + 1; j < links.size(); ++j) {
      if (links[i] == links[j]) return true;
    }
  }
  return false;
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> link_capacity_bytes_per_s)
    : capacity_(std::move(link_capacity_bytes_per_s)),
      link_members_(capacity_.size()),
      link_visit_(capacity_.size(), 0),
      link_dirty_(capacity_.size(), 0) {
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    if (!(capacity_[l] > 0.0) || !std::isfinite(capacity_[l])) {
      throw std::invalid_argument("FlowNetwork: link " + std::to_string(l) +
                                  " needs a finite capacity > 0 bytes/s");
    }
  }
}

FlowId FlowNetwork::start(FlowSpec spec, Picoseconds now) {
  if (now < last_settle_ps_) {
    throw std::invalid_argument("FlowNetwork::start: time is before the last settle");
  }
  if (!(spec.bytes > 0.0) || !std::isfinite(spec.bytes)) {
    throw std::invalid_argument("FlowNetwork::start: bytes must be finite and > 0");
  }
  if (std::isnan(spec.rate_cap_bytes_per_s) || std::isinf(spec.rate_cap_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork::start: the rate cap must be finite");
  }
  for (int link : spec.links) {
    if (link < 0 || link >= link_count()) {
      throw std::invalid_argument("FlowNetwork::start: unknown link " + std::to_string(link));
    }
  }
  if (has_repeated_link(spec.links)) {
    throw std::invalid_argument("FlowNetwork::start: a route repeats a link");
  }

  int slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<int>(flows_.size());
    flows_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const FlowId id = next_id_++;
  Flow& flow = flows_[slot];
  flow = Flow{};
  flow.id = id;
  flow.links = std::move(spec.links);
  flow.bytes = spec.bytes;
  flow.rate_cap_bytes_per_s = std::max(spec.rate_cap_bytes_per_s, 0.0);
  flow.remaining_bytes = spec.bytes;
  flow.anchor_ps = now;
  flow.active = true;
  slot_of_.emplace(id, slot);
  // Ids only grow, so appending keeps every member list in id order.
  for (int link : flow.links) {
    link_members_[link].push_back({id, slot});
    mark_dirty(link);
  }
  if (flow.links.empty()) pending_routeless_.push_back(slot);
  return id;
}

void FlowNetwork::settle(Picoseconds now) {
  if (now < last_settle_ps_) {
    throw std::invalid_argument("FlowNetwork::settle: time is before the last settle");
  }
  last_settle_ps_ = now;
  rerated_.clear();
  if (dirty_links_.empty() && pending_routeless_.empty()) return;
  ++epoch_;
  collect_component();
  if (!component_.empty()) allocate_component(now);
}

std::optional<Picoseconds> FlowNetwork::next_finish_ps() const {
  if (finish_queue_.empty()) return std::nullopt;
  return std::get<0>(*finish_queue_.begin());
}

std::vector<FlowId> FlowNetwork::take_finished(Picoseconds now) {
  std::vector<FlowId> done;
  while (!finish_queue_.empty() && std::get<0>(*finish_queue_.begin()) <= now) {
    const auto [finish_ps, id, slot] = *finish_queue_.begin();
    finish_queue_.erase(finish_queue_.begin());
    Flow& flow = flows_[slot];
    for (int link : flow.links) mark_dirty(link);
    flow.active = false;
    flow.queued = false;
    slot_of_.erase(id);
    free_slots_.push_back(slot);
    done.push_back(id);
  }
  std::sort(done.begin(), done.end());
  return done;
}

double FlowNetwork::rate_bytes_per_s(FlowId id) const { return flow_at(id).rate_bytes_per_s; }

std::size_t FlowNetwork::active_flows() const { return slot_of_.size(); }

int FlowNetwork::link_count() const { return static_cast<int>(capacity_.size()); }

double FlowNetwork::link_load_bytes_per_s(int link) const {
  if (link < 0 || link >= link_count()) {
    throw std::out_of_range("FlowNetwork::link_load_bytes_per_s: unknown link");
  }
  double load = 0.0;
  for (const LinkMember& member : link_members_[link]) {
    if (is_live(member)) load += flows_[member.slot].rate_bytes_per_s;
  }
  return load;
}

std::int64_t FlowNetwork::recomputed_flows() const { return recomputed_flows_; }

bool FlowNetwork::contains(FlowId id) const { return slot_of_.count(id) != 0; }

std::optional<Picoseconds> FlowNetwork::projected_finish_ps(FlowId id) const {
  const Flow& flow = flow_at(id);
  if (!flow.queued) return std::nullopt;
  return flow.finish_ps;
}

const FlowNetwork::Flow& FlowNetwork::flow_at(FlowId id) const {
  const auto it = slot_of_.find(id);
  if (it == slot_of_.end()) {
    throw std::out_of_range("FlowNetwork: flow " + std::to_string(id) + " is not active");
  }
  return flows_[it->second];
}

bool FlowNetwork::is_live(const LinkMember& member) const {
  const Flow& flow = flows_[member.slot];
  return flow.active && flow.id == member.id;
}

void FlowNetwork::mark_dirty(int link) {
  if (!link_dirty_[link]) {
    link_dirty_[link] = 1;
    dirty_links_.push_back(link);
  }
}

// Gathers, in id order, every flow reachable from a dirty link through shared
// links, plus the empty-route flows started since the last settle. Dirty links
// are the only ones that can hold members of taken flows; they are pruned here.
void FlowNetwork::collect_component() {
  component_.clear();
  link_stack_.clear();
  for (int link : dirty_links_) {
    link_dirty_[link] = 0;
    std::erase_if(link_members_[link],
                  [this](const LinkMember& member) { return !is_live(member); });
    if (link_visit_[link] != epoch_) {
      link_visit_[link] = epoch_;
      link_stack_.push_back(link);
    }
  }
  dirty_links_.clear();
  while (!link_stack_.empty()) {
    const int link = link_stack_.back();
    link_stack_.pop_back();
    for (const LinkMember& member : link_members_[link]) {
      Flow& flow = flows_[member.slot];
      if (flow.visit == epoch_) continue;
      flow.visit = epoch_;
      component_.push_back(member.slot);
      for (int next : flow.links) {
        if (link_visit_[next] != epoch_) {
          link_visit_[next] = epoch_;
          link_stack_.push_back(next);
        }
      }
    }
  }
  for (int slot : pending_routeless_) {
    Flow& flow = flows_[slot];
    if (flow.active && flow.visit != epoch_) {
      flow.visit = epoch_;
      component_.push_back(slot);
    }
  }
  pending_routeless_.clear();
  std::sort(component_.begin(), component_.end(),
            [this](int a, int b) { return flows_[a].id < flows_[b].id; });
}

double FlowNetwork::remaining_at(const Flow& flow, Picoseconds now) const {
  if (!(flow.rate_bytes_per_s > 0.0) || std::isinf(flow.rate_bytes_per_s)) {
    return flow.remaining_bytes;
  }
  const auto elapsed_ps = static_cast<double>(now - flow.anchor_ps);
  return flow.remaining_bytes - flow.rate_bytes_per_s * elapsed_ps / 1e12;
}

void FlowNetwork::set_finish(int slot, Picoseconds finish_ps) {
  Flow& flow = flows_[slot];
  if (flow.queued) finish_queue_.erase({flow.finish_ps, flow.id, slot});
  flow.finish_ps = finish_ps;
  flow.queued = true;
  finish_queue_.insert({finish_ps, flow.id, slot});
}

// Max-min fair rates for the collected component. Flows whose rate changes are
// re-anchored at `now`; a re-anchored flow that would finish within this picosecond at
// its new rate finishes at `now`, and the allocation is redone without it.
void FlowNetwork::allocate_component(Picoseconds now) {
  solved_.clear();
  for (int slot : component_) {
    Flow& flow = flows_[slot];
    if (flow.queued && flow.finish_ps <= now) {
      flow.rate_bytes_per_s = 0.0;  // done, waiting for take_finished
    } else {
      solved_.push_back(slot);
    }
  }
  bool guard_fired = true;
  while (guard_fired) {
    problem_.clear();
    for (int slot : solved_) {
      problem_.add_flow(flows_[slot].links, flows_[slot].rate_cap_bytes_per_s);
    }
    solver_.solve(capacity_, problem_, rates_);
    recomputed_flows_ += static_cast<std::int64_t>(solved_.size());
    guard_fired = false;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < solved_.size(); ++i) {
      Flow& flow = flows_[solved_[i]];
      const double rate = rates_[i];
      if (rate != flow.rate_bytes_per_s && !std::isinf(rate)) {
        // Ends now only if at its new rate it would finish within this picosecond: a
        // byte-count threshold would cut short a flow whose last bytes are slowed down.
        const double remaining = remaining_at(flow, now);
        if (remaining * 1e12 < rate) {
          flow.remaining_bytes = 0.0;
          flow.anchor_ps = now;
          flow.rate_bytes_per_s = 0.0;
          set_finish(solved_[i], now);
          rerated_.push_back(flow.id);
          guard_fired = true;
          continue;
        }
      }
      solved_[kept] = solved_[i];
      rates_[kept] = rate;
      ++kept;
    }
    solved_.resize(kept);
  }

  for (std::size_t i = 0; i < solved_.size(); ++i) {
    const int slot = solved_[i];
    Flow& flow = flows_[slot];
    const double rate = rates_[i];
    if (rate == flow.rate_bytes_per_s && flow.queued) continue;  // same anchor and finish
    rerated_.push_back(flow.id);
    if (std::isinf(rate)) {
      // Empty route, no cap: the copy is instantaneous, done at its start.
      flow.rate_bytes_per_s = rate;
      flow.remaining_bytes = 0.0;
      set_finish(slot, flow.anchor_ps);
      continue;
    }
    flow.remaining_bytes = remaining_at(flow, now);
    flow.anchor_ps = now;
    flow.rate_bytes_per_s = rate;
    set_finish(slot, later_ps(now, flow.remaining_bytes * 1e12 / rate));
  }
}

}  // namespace tilesim
