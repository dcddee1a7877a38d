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
      link_dirty_(capacity_.size(), 0),
      link_fill_(capacity_.size()),
      level_pos_(capacity_.size(), -1),
      link_added_(capacity_.size(), 0),
      link_removed_(capacity_.size(), 0) {
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
  if (!spec.link_multiplicity.empty()) {
    if (spec.link_multiplicity.size() != spec.links.size()) {
      throw std::invalid_argument(
          "FlowNetwork::start: link_multiplicity needs one entry per route link");
    }
    for (int m : spec.link_multiplicity) {
      if (m < 1) throw std::invalid_argument("FlowNetwork::start: a link multiplicity is < 1");
    }
  }

  int slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<int>(flows_.size());
    flows_.emplace_back();
    level_pos_.push_back(-1);  // its cap's position
    slot_open_.push_back(0);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const FlowId id = next_id_++;
  Flow& flow = flows_[slot];
  flow = Flow{};
  flow.id = id;
  flow.links = std::move(spec.links);
  flow.multiplicity = std::move(spec.link_multiplicity);
  flow.multiplied = !flow.multiplicity.empty();
  flow.bytes = spec.bytes;
  flow.rate_cap_bytes_per_s = std::max(spec.rate_cap_bytes_per_s, 0.0);
  flow.remaining_bytes = spec.bytes;
  flow.anchor_ps = now;
  flow.active = true;
  slot_of_id_.push_back(slot);  // ids are dense: id == first_id_ + slot_of_id_.size() before
  ++active_count_;
  // Ids only grow, so appending keeps every member list in id order.
  for (int link : flow.links) {
    link_members_[link].push_back({id, slot});
    mark_dirty(link);
  }
  if (flow.links.empty()) {
    pending_routeless_.push_back(slot);
  } else {
    pending_started_.push_back(slot);
  }
  return id;
}

void FlowNetwork::settle(Picoseconds now) {
  if (now < last_settle_ps_) {
    throw std::invalid_argument("FlowNetwork::settle: time is before the last settle");
  }
  last_settle_ps_ = now;
  rerated_.clear();
  if (!dirty_links_.empty() || !pending_routeless_.empty() || !pending_started_.empty()) {
    ++epoch_;
    prune_dirty_links();
    allocate(now);
  }
  // Taken flows keep their slot (route, log position) until the settle that removes
  // them from the filling.
  free_slots_.insert(free_slots_.end(), released_slots_.begin(), released_slots_.end());
  released_slots_.clear();
}

std::optional<Picoseconds> FlowNetwork::next_finish_ps() const {
  if (finish_heap_.empty()) return std::nullopt;
  return flows_[finish_heap_.front()].finish_ps;
}

std::vector<FlowId> FlowNetwork::take_finished(Picoseconds now) {
  std::vector<FlowId> done;
  while (!finish_heap_.empty() && flows_[finish_heap_.front()].finish_ps <= now) {
    const int slot = finish_heap_.front();
    unqueue(slot);
    Flow& flow = flows_[slot];
    for (int link : flow.links) mark_dirty(link);
    flow.active = false;
    slot_of_id_[static_cast<std::size_t>(flow.id - first_id_)] = -1;
    --active_count_;
    if (flow.in_filling) taken_in_filling_.push_back(slot);
    released_slots_.push_back(slot);
    done.push_back(flow.id);
  }
  std::sort(done.begin(), done.end());
  forget_taken_ids();
  return done;
}

// The id map covers the ids from the oldest active flow on: once more than half of it
// is a prefix of taken flows, that prefix goes (amortised O(1) per flow), so memory
// follows the flows in flight, not every flow ever started.
void FlowNetwork::forget_taken_ids() {
  while (dead_id_prefix_ < slot_of_id_.size() && slot_of_id_[dead_id_prefix_] < 0) {
    ++dead_id_prefix_;
  }
  if (dead_id_prefix_ < 1024 || 2 * dead_id_prefix_ < slot_of_id_.size()) return;
  slot_of_id_.erase(slot_of_id_.begin(),
                    slot_of_id_.begin() + static_cast<std::ptrdiff_t>(dead_id_prefix_));
  first_id_ += static_cast<FlowId>(dead_id_prefix_);
  dead_id_prefix_ = 0;
}

double FlowNetwork::rate_bytes_per_s(FlowId id) const { return flow_at(id).rate_bytes_per_s; }

std::size_t FlowNetwork::active_flows() const { return active_count_; }

int FlowNetwork::link_count() const { return static_cast<int>(capacity_.size()); }

double FlowNetwork::link_load_bytes_per_s(int link) const {
  if (link < 0 || link >= link_count()) {
    throw std::out_of_range("FlowNetwork::link_load_bytes_per_s: unknown link");
  }
  double load = 0.0;
  for (const LinkMember& member : link_members_[link]) {
    if (!is_live(member)) continue;
    const Flow& flow = flows_[member.slot];
    const auto at = std::find(flow.links.begin(), flow.links.end(), link) - flow.links.begin();
    const int shares = shares_on(flow, static_cast<std::size_t>(at));
    for (int k = 0; k < shares; ++k) load += flow.rate_bytes_per_s;  // as m flows add up
  }
  return load;
}

std::int64_t FlowNetwork::recomputed_flows() const { return recomputed_flows_; }

bool FlowNetwork::contains(FlowId id) const {
  return id >= first_id_ && id < next_id_ &&
         slot_of_id_[static_cast<std::size_t>(id - first_id_)] >= 0;
}

std::optional<Picoseconds> FlowNetwork::projected_finish_ps(FlowId id) const {
  const Flow& flow = flow_at(id);
  if (!flow.queued) return std::nullopt;
  return flow.finish_ps;
}

const FlowNetwork::Flow& FlowNetwork::flow_at(FlowId id) const {
  if (!contains(id)) {
    throw std::out_of_range("FlowNetwork: flow " + std::to_string(id) + " is not active");
  }
  return flows_[static_cast<std::size_t>(slot_of_id_[static_cast<std::size_t>(id - first_id_)])];
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

// Dirty links are the only ones that can hold members of taken flows: prune them, so
// that every member list holds active flows only.
void FlowNetwork::prune_dirty_links() {
  for (int link : dirty_links_) {
    link_dirty_[link] = 0;
    std::erase_if(link_members_[link],
                  [this](const LinkMember& member) { return !is_live(member); });
  }
  dirty_links_.clear();
}

// The finish queue is a binary min-heap of slots on (finish_ps, id); each flow knows
// its position, so a re-rated flow moves in O(log F) without a search.
namespace {

bool finishes_before(Picoseconds a_ps, FlowId a_id, Picoseconds b_ps, FlowId b_id) {
  return a_ps != b_ps ? a_ps < b_ps : a_id < b_id;
}

}  // namespace

void FlowNetwork::set_finish(int slot, Picoseconds finish_ps) {
  Flow& flow = flows_[slot];
  if (!flow.queued) {
    flow.queued = true;
    flow.heap_pos = static_cast<int>(finish_heap_.size());
    finish_heap_.push_back(slot);
  }
  flow.finish_ps = finish_ps;
  sift_finish(flow.heap_pos);
}

void FlowNetwork::unqueue(int slot) {
  Flow& flow = flows_[slot];
  const int pos = flow.heap_pos;
  const int last = finish_heap_.back();
  finish_heap_.pop_back();
  flow.queued = false;
  flow.heap_pos = -1;
  if (last == slot) return;
  finish_heap_[static_cast<std::size_t>(pos)] = last;
  flows_[last].heap_pos = pos;
  sift_finish(pos);
}

// Moves the entry at `pos` up or down to its place.
void FlowNetwork::sift_finish(int pos) {
  const auto before = [this](int a, int b) {
    return finishes_before(flows_[a].finish_ps, flows_[a].id, flows_[b].finish_ps, flows_[b].id);
  };
  const int slot = finish_heap_[static_cast<std::size_t>(pos)];
  while (pos > 0) {
    const int parent = (pos - 1) / 2;
    const int above = finish_heap_[static_cast<std::size_t>(parent)];
    if (!before(slot, above)) break;
    finish_heap_[static_cast<std::size_t>(pos)] = above;
    flows_[above].heap_pos = pos;
    pos = parent;
  }
  const int size = static_cast<int>(finish_heap_.size());
  while (true) {
    int child = 2 * pos + 1;
    if (child >= size) break;
    if (child + 1 < size && before(finish_heap_[static_cast<std::size_t>(child + 1)],
                                   finish_heap_[static_cast<std::size_t>(child)])) {
      ++child;
    }
    const int below = finish_heap_[static_cast<std::size_t>(child)];
    if (!before(below, slot)) break;
    finish_heap_[static_cast<std::size_t>(pos)] = below;
    flows_[below].heap_pos = pos;
    pos = child;
  }
  finish_heap_[static_cast<std::size_t>(pos)] = slot;
  flows_[slot].heap_pos = pos;
}

// Sorts slots by flow id through (id, slot) pairs: no indirection in the comparisons.
void FlowNetwork::sort_by_id(std::vector<int>& slots) {
  id_order_.clear();
  for (int slot : slots) id_order_.emplace_back(flows_[slot].id, slot);
  std::sort(id_order_.begin(), id_order_.end());
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = id_order_[i].second;
}

double FlowNetwork::remaining_at(const Flow& flow, Picoseconds now) const {
  if (!(flow.rate_bytes_per_s > 0.0) || std::isinf(flow.rate_bytes_per_s)) {
    return flow.remaining_bytes;
  }
  const auto elapsed_ps = static_cast<double>(now - flow.anchor_ps);
  return flow.remaining_bytes - flow.rate_bytes_per_s * elapsed_ps / 1e12;
}

// Max-min fair rates after the changes since the last settle. Flows whose rate changes
// are re-anchored at `now`; a re-anchored flow that would finish within this picosecond
// at its new rate finishes at `now`, and the allocation is redone without it. Rerated
// flows are reported as a full solve of the changed components reports them: the flows
// the guard ends by round of the allocation, in id order, then the others whose rate
// changed, in id order (a flow the filling did not re-solve keeps its rate bit for bit).
//
// The changed components are found through the logs, not by a search: a log holds a
// union of whole components (a scratch solve splits its flows into components; removals
// keep a union a union; a started flow joins the one log its links belong to, or merges
// the logs they belong to in a scratch solve), so the flows of the logs a change touches
// contain its component.
void FlowNetwork::allocate(Picoseconds now) {
  std::vector<int> removed = std::move(taken_in_filling_);
  taken_in_filling_.clear();
  std::vector<int> added = std::move(pending_started_);
  pending_started_.clear();
  std::vector<int> routeless;
  for (int slot : pending_routeless_) {
    Flow& flow = flows_[slot];
    if (!flow.active) continue;
    // Limited by its cap only, or an instant copy: no link to share.
    flow.filled_rate_bytes_per_s = flow.rate_cap_bytes_per_s > 0.0
                                       ? flow.rate_cap_bytes_per_s
                                       : std::numeric_limits<double>::infinity();
    routeless.push_back(slot);
  }
  pending_routeless_.clear();

  involved_logs_.clear();
  const auto involve = [this](int log) {
    FillingLog& entry = logs_[static_cast<std::size_t>(log)];
    if (entry.mark != epoch_) {
      entry.mark = epoch_;
      involved_logs_.push_back(log);
    }
  };
  for (int slot : removed) involve(flows_[slot].log);
  for (int slot : added) {
    for (int link : flows_[slot].links) {
      if (link_fill_[link].members > 0 && link_fill_[link].log >= 0 &&
          logs_[static_cast<std::size_t>(link_fill_[link].log)].stamp == link_fill_[link].stamp) {
        involve(link_fill_[link].log);
      }
    }
  }
  // A flow of a changed component whose finish is due but that was not taken yet is
  // done: it keeps its finish time, takes no more bandwidth and gets rate 0.
  if (!involved_logs_.empty()) {
    due_.clear();
    if (!finish_heap_.empty()) due_.push_back(0);
    for (std::size_t i = 0; i < due_.size(); ++i) {
      const int pos = due_[i];
      const int slot = finish_heap_[static_cast<std::size_t>(pos)];
      Flow& flow = flows_[slot];
      if (flow.finish_ps > now) continue;
      if (flow.in_filling && logs_[static_cast<std::size_t>(flow.log)].mark == epoch_) {
        flow.rate_bytes_per_s = 0.0;
        removed.push_back(slot);
      }
      for (int child = 2 * pos + 1; child <= 2 * pos + 2; ++child) {
        if (child < static_cast<int>(finish_heap_.size())) due_.push_back(child);
      }
    }
  }

  resolved_.clear();
  if (involved_logs_.size() == 1) {
    solve_incrementally(involved_logs_.front(), removed, added);
  } else if (!involved_logs_.empty() || !added.empty()) {
    // Started flows that merge logs (or join none): solve their union anew.
    for (int slot : removed) {
      flows_[slot].in_filling = false;
      slot_open_[static_cast<std::size_t>(slot)] = 0;
    }
    std::vector<int> slots = std::move(added);
    for (int log : involved_logs_) {
      for (int slot : logs_[static_cast<std::size_t>(log)].freezes) {
        if (flows_[slot].in_filling) slots.push_back(slot);
      }
      drop_log(log);
    }
    solve_components_from_scratch(slots);
  }
  resolved_.insert(resolved_.end(), routeless.begin(), routeless.end());

  // Only the flows whose rate changes are put in id order (a few of those re-solved):
  // each flow's new anchor and finish depend on its own state alone.
  std::vector<int> all_resolved;
  std::vector<int> fired;
  while (true) {
    recomputed_flows_ += static_cast<std::int64_t>(resolved_.size());
    fired.clear();
    for (int slot : resolved_) {
      Flow& flow = flows_[slot];
      if (flow.resolved_mark != epoch_) {
        flow.resolved_mark = epoch_;
        all_resolved.push_back(slot);
      }
      const double rate = flow.filled_rate_bytes_per_s;
      // Ends now only if at its new rate it would finish within this picosecond: a
      // byte-count threshold would cut short a flow whose last bytes are slowed down.
      if (rate != flow.rate_bytes_per_s && !std::isinf(rate) &&
          remaining_at(flow, now) * 1e12 < rate) {
        fired.push_back(slot);
      }
    }
    if (fired.empty()) break;
    sort_by_id(fired);
    for (int slot : fired) {
      Flow& flow = flows_[slot];
      flow.remaining_bytes = 0.0;
      flow.anchor_ps = now;
      flow.rate_bytes_per_s = 0.0;
      flow.fired_mark = epoch_;
      set_finish(slot, now);
      rerated_.push_back(flow.id);
    }
    std::erase_if(fired, [this](int slot) { return !flows_[slot].in_filling; });
    if (fired.empty()) break;
    resolved_.clear();
    // Each log drops its own ended flows (logs are independent).
    std::sort(fired.begin(), fired.end(), [this](int a, int b) {
      return flows_[a].log != flows_[b].log ? flows_[a].log < flows_[b].log
                                            : flows_[a].id < flows_[b].id;
    });
    for (std::size_t begin = 0; begin < fired.size();) {
      std::size_t end = begin + 1;
      while (end < fired.size() && flows_[fired[end]].log == flows_[fired[begin]].log) ++end;
      const std::vector<int> of_log(fired.begin() + static_cast<std::ptrdiff_t>(begin),
                                    fired.begin() + static_cast<std::ptrdiff_t>(end));
      solve_incrementally(flows_[fired[begin]].log, of_log, {});
      begin = end;
    }
  }

  std::erase_if(all_resolved, [this](int slot) {
    const Flow& flow = flows_[slot];
    return flow.fired_mark == epoch_ ||
           (flow.filled_rate_bytes_per_s == flow.rate_bytes_per_s && flow.queued);  // unchanged
  });
  sort_by_id(all_resolved);
  for (int slot : all_resolved) {
    Flow& flow = flows_[slot];
    const double rate = flow.filled_rate_bytes_per_s;
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
