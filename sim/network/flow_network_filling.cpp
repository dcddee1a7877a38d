// Incremental progressive filling for FlowNetwork (see flow_network.hpp).
//
// The filling of a component is the sequence of pops of a min-heap of fill levels
// (share, tag): a link's share is remaining capacity / unfrozen flows, max(., 0); a cap
// is the flow's own level; ties go to the smaller tag (links by id, then caps by flow
// id). Each pop freezes the unfrozen flows of its link (in id order) or its capped flow
// at the level and subtracts their rates from the links of their routes, in route order.
// The arithmetic is the one of MaxMinFairSolver, so the rates are the same bits.
//
// Why a prefix of the log survives a change. Let pops 0..j-1 be unchanged, so the state
// before pop j is the same with and without the change, and let w_j be the old winner.
// - Removing flow f frozen at pop p(f) >= j leaves every candidate not on f's route as
//   it was and raises the share of each link on its route (one flow fewer, same
//   remaining capacity); w_j is not on f's route (it would have frozen f at j < p(f)),
//   so w_j still wins: pops before p(f) stay.
// - Adding flow g lowers the shares of the links of its route and adds its cap. Pop j
//   stays unless w_j is one of g's links, or a link of g's route, with the added flows,
//   offers a level below w_j's, or g's cap is below it. A link's state only changes at
//   the pops recorded in its steps, so each interval between two of its steps has one
//   offered level X; the first pop in it whose running maximum of levels exceeds X is
//   no later than the first whose own level does (the maximum is nondecreasing, found
//   by binary search), so the resumed filling may start a little early, never late.
// Starting at the earliest such pop, the rest is filled again from the restored state.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "sim/network/flow_network.hpp"

namespace tilesim {

namespace {

// Whether fill level (a_share, a_tag) comes after (b_share, b_tag) in the heap's order.
bool level_after(double a_share, std::int64_t a_tag, double b_share, std::int64_t b_tag) {
  return a_share != b_share ? a_share > b_share : a_tag > b_tag;
}

}  // namespace

bool FlowNetwork::log_is_valid(const Flow& flow) const {
  return flow.log >= 0 && logs_[static_cast<std::size_t>(flow.log)].stamp == flow.log_stamp;
}

int FlowNetwork::new_log() {
  int index = 0;
  if (free_logs_.empty()) {
    index = static_cast<int>(logs_.size());
    logs_.emplace_back();
  } else {
    index = free_logs_.back();
    free_logs_.pop_back();
  }
  FillingLog& log = logs_[static_cast<std::size_t>(index)];
  log.stamp = next_log_stamp_++;
  log.live_flows = 0;
  log.pops.clear();
  log.freezes.clear();
  return index;
}

void FlowNetwork::drop_log(int index) {
  FillingLog& log = logs_[static_cast<std::size_t>(index)];
  if (log.stamp == 0) return;
  log.stamp = 0;
  log.pops.clear();
  log.freezes.clear();
  free_logs_.push_back(index);
}

void FlowNetwork::reset_link(int link, int log, std::uint64_t stamp) {
  link_fill_[link].stamp = stamp;
  link_fill_[link].log = log;
  link_fill_[link].members = 0;
  link_fill_[link].frozen = 0;
  link_fill_[link].remaining_bytes_per_s = capacity_[link];
  link_fill_[link].popped_at = -1;
  link_fill_[link].steps.clear();
}

void FlowNetwork::mark_link(int link) {
  if (link_fill_[link].mark != link_mark_epoch_) {
    link_fill_[link].mark = link_mark_epoch_;
    candidate_links_.push_back(link);
  }
}

inline double FlowNetwork::link_share(int link) const {
  const int unfrozen = link_fill_[link].members - link_fill_[link].frozen;
  return std::max(link_fill_[link].remaining_bytes_per_s / static_cast<double>(unfrozen), 0.0);
}

void FlowNetwork::push_link(int link) { heap_.push_back({link_share(link), link, link}); }

void FlowNetwork::push_cap(int slot) {
  const Flow& flow = flows_[slot];
  const auto link_count = static_cast<std::int64_t>(capacity_.size());
  heap_.push_back(
      {flow.rate_cap_bytes_per_s, link_count + flow.id, static_cast<int>(capacity_.size()) + slot});
}

// The level heap: a binary min-heap on (share, tag) whose items know their position, so
// a re-keyed link moves in place (no stale entries) and a frozen flow's cap leaves it.
void FlowNetwork::place_level(int pos, const HeapEntry& entry) {
  heap_[static_cast<std::size_t>(pos)] = entry;
  level_pos_[static_cast<std::size_t>(entry.item)] = pos;
}

void FlowNetwork::sift_level(int pos) {
  const HeapEntry entry = heap_[static_cast<std::size_t>(pos)];
  const auto before = [](const HeapEntry& a, const HeapEntry& b) {
    return a.share_bytes_per_s != b.share_bytes_per_s ? a.share_bytes_per_s < b.share_bytes_per_s
                                                      : a.tag < b.tag;
  };
  while (pos > 0) {
    const int parent = (pos - 1) / 2;
    if (!before(entry, heap_[static_cast<std::size_t>(parent)])) break;
    place_level(pos, heap_[static_cast<std::size_t>(parent)]);
    pos = parent;
  }
  const int size = static_cast<int>(heap_.size());
  while (true) {
    int child = 2 * pos + 1;
    if (child >= size) break;
    if (child + 1 < size && before(heap_[static_cast<std::size_t>(child + 1)],
                                   heap_[static_cast<std::size_t>(child)])) {
      ++child;
    }
    if (!before(heap_[static_cast<std::size_t>(child)], entry)) break;
    place_level(pos, heap_[static_cast<std::size_t>(child)]);
    pos = child;
  }
  place_level(pos, entry);
}

void FlowNetwork::remove_level(int pos) {
  const HeapEntry& gone = heap_[static_cast<std::size_t>(pos)];
  level_pos_[static_cast<std::size_t>(gone.item)] = -1;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  if (pos == static_cast<int>(heap_.size())) return;
  place_level(pos, last);
  sift_level(pos);
}

// Splits the flows into connected components (flows sharing a link, transitively) and
// gives each its own log, so that a later change re-solves only its own component.
void FlowNetwork::solve_components_from_scratch(const std::vector<int>& slots) {
  ++visit_epoch_;
  for (int slot : slots) flows_[slot].in_filling = true;  // the flows to place
  for (int seed : slots) {
    if (flows_[seed].visit == visit_epoch_) continue;
    component_.clear();
    flow_stack_.assign(1, seed);
    flows_[seed].visit = visit_epoch_;
    while (!flow_stack_.empty()) {
      const int slot = flow_stack_.back();
      flow_stack_.pop_back();
      component_.push_back(slot);
      for (int link : flows_[slot].links) {
        if (link_visit_[link] == visit_epoch_) continue;
        link_visit_[link] = visit_epoch_;
        for (const LinkMember& member : link_members_[link]) {
          Flow& next = flows_[member.slot];
          if (next.visit == visit_epoch_ || !next.in_filling || !is_live(member)) continue;
          next.visit = visit_epoch_;
          flow_stack_.push_back(member.slot);
        }
      }
    }
    solve_from_scratch(component_);
  }
}

// Enters an unfrozen flow into log `index`: its links count its shares (a link new to the
// log starts from its full capacity) and become candidates of the filling.
void FlowNetwork::enter_filling(int index, int slot) {
  FillingLog& log = logs_[static_cast<std::size_t>(index)];
  Flow& flow = flows_[slot];
  flow.in_filling = true;
  flow.log = index;
  flow.log_stamp = log.stamp;
  flow.pop = -1;
  slot_open_[static_cast<std::size_t>(slot)] = 1;
  ++log.live_flows;
  for (std::size_t i = 0; i < flow.links.size(); ++i) {
    const int link = flow.links[i];
    if (link_fill_[link].stamp != log.stamp) reset_link(link, index, log.stamp);
    link_fill_[link].members += shares_on(flow, i);
    mark_link(link);
  }
}

int FlowNetwork::solve_from_scratch(const std::vector<int>& slots) {
  const int index = new_log();
  ++link_mark_epoch_;
  candidate_links_.clear();
  heap_.clear();
  for (int slot : slots) enter_filling(index, slot);
  for (int link : candidate_links_) push_link(link);
  for (int slot : slots) {
    if (flows_[slot].rate_cap_bytes_per_s > 0.0) push_cap(slot);
  }
  fill(index);
  return index;
}

void FlowNetwork::solve_incrementally(int index, const std::vector<int>& removed,
                                      const std::vector<int>& added) {
  FillingLog& log = logs_[static_cast<std::size_t>(index)];
  const int first = first_altered_pop(log, removed, added);
  ++link_mark_epoch_;
  candidate_links_.clear();
  unfrozen_caps_.clear();
  heap_.clear();
  roll_back(log, first);
  for (int slot : removed) {
    Flow& flow = flows_[slot];
    assert(flow.pop < 0);
    flow.in_filling = false;
    slot_open_[static_cast<std::size_t>(slot)] = 0;
    --log.live_flows;
    for (std::size_t i = 0; i < flow.links.size(); ++i) {
      link_fill_[flow.links[i]].members -= shares_on(flow, i);
    }
  }
  for (int slot : added) {
    enter_filling(index, slot);
    const Flow& flow = flows_[slot];
    if (flow.rate_cap_bytes_per_s > 0.0) unfrozen_caps_.push_back(slot);
  }
  for (int link : candidate_links_) {
    if (link_fill_[link].members > link_fill_[link].frozen) push_link(link);
  }
  for (int slot : unfrozen_caps_) {
    if (flows_[slot].in_filling) push_cap(slot);
  }
  fill(index);
}

int FlowNetwork::first_altered_pop(const FillingLog& log, const std::vector<int>& removed,
                                   const std::vector<int>& added) {
  int first = static_cast<int>(log.pops.size());
  for (int slot : removed) first = std::min(first, flows_[slot].pop);
  if (added.empty() || first == 0) return first;
  // The first pop in [begin, end) whose running maximum level exceeds (share, tag).
  const auto first_above = [&log](int begin, int end, double share, std::int64_t tag) {
    const auto it = std::partition_point(
        log.pops.begin() + begin, log.pops.begin() + end, [share, tag](const Pop& pop) {
          return !level_after(pop.max_share_bytes_per_s, pop.max_tag, share, tag);
        });
    return static_cast<int>(it - log.pops.begin());
  };
  const auto link_count = static_cast<std::int64_t>(capacity_.size());
  ++link_mark_epoch_;
  candidate_links_.clear();
  for (int slot : removed) {
    const Flow& flow = flows_[slot];
    for (std::size_t i = 0; i < flow.links.size(); ++i) {
      link_removed_[flow.links[i]] += shares_on(flow, i);
      mark_link(flow.links[i]);
    }
  }
  for (int slot : added) {
    const Flow& flow = flows_[slot];
    for (std::size_t i = 0; i < flow.links.size(); ++i) {
      link_added_[flow.links[i]] += shares_on(flow, i);
      mark_link(flow.links[i]);
    }
    if (flow.rate_cap_bytes_per_s > 0.0) {
      first = first_above(0, first, flow.rate_cap_bytes_per_s, link_count + flow.id);
    }
  }
  for (int link : candidate_links_) {
    const int add = link_added_[link];
    const int remove = link_removed_[link];
    link_added_[link] = 0;
    link_removed_[link] = 0;
    if (add == 0 || first == 0) continue;
    if (link_fill_[link].stamp != log.stamp) {
      // New to this component: capacity intact and only added flows at every pop.
      const double share = capacity_[link] / static_cast<double>(add);
      first = first_above(0, first, std::max(share, 0.0), link);
      continue;
    }
    if (link_fill_[link].popped_at >= 0) first = std::min(first, link_fill_[link].popped_at);
    if (add <= remove) continue;  // its share only rises before the removed flows' pops
    const int members = link_fill_[link].members;
    const std::vector<LinkStep>& steps = link_fill_[link].steps;
    int frozen = 0;
    double remaining = capacity_[link];
    int begin = 0;
    for (std::size_t s = 0; s <= steps.size() && begin < first; ++s) {
      const int end = s < steps.size() ? std::min(first, steps[s].pop + 1) : first;
      const int unfrozen = members - frozen + add - remove;
      if (unfrozen > 0) {
        const double share = remaining / static_cast<double>(unfrozen);
        const int above = first_above(begin, end, std::max(share, 0.0), link);
        if (above < end) {
          first = above;
          break;
        }
      }
      if (s < steps.size()) {
        frozen = steps[s].frozen;
        remaining = steps[s].remaining_bytes_per_s;
        begin = steps[s].pop + 1;
      }
    }
  }
  return first;
}

// Unfreezes every flow frozen at pop `pop` or later and restores the links they cross to
// their state before it (the steps hold the exact values: no subtraction is undone by an
// addition). The restored links are the candidates of the resumed filling.
void FlowNetwork::roll_back(FillingLog& log, int pop) {
  if (pop >= static_cast<int>(log.pops.size())) return;
  const int begin = log.pops[static_cast<std::size_t>(pop)].freeze_begin;
  for (std::size_t i = static_cast<std::size_t>(begin); i < log.freezes.size(); ++i) {
    const int slot = log.freezes[i];
    Flow& flow = flows_[slot];
    flow.pop = -1;
    slot_open_[static_cast<std::size_t>(slot)] = 1;
    if (flow.rate_cap_bytes_per_s > 0.0) unfrozen_caps_.push_back(slot);
    for (int link : flow.links) {
      if (link_fill_[link].mark == link_mark_epoch_) continue;
      mark_link(link);
      std::vector<LinkStep>& steps = link_fill_[link].steps;
      while (!steps.empty() && steps.back().pop >= pop) steps.pop_back();
      link_fill_[link].frozen = steps.empty() ? 0 : steps.back().frozen;
      link_fill_[link].remaining_bytes_per_s =
          steps.empty() ? capacity_[link] : steps.back().remaining_bytes_per_s;
      if (link_fill_[link].popped_at >= pop) link_fill_[link].popped_at = -1;
    }
  }
  log.freezes.resize(static_cast<std::size_t>(begin));
  log.pops.resize(static_cast<std::size_t>(pop));
}

void FlowNetwork::freeze(FillingLog& log, int slot, double rate_bytes_per_s) {
  Flow& flow = flows_[slot];
  const int pop = static_cast<int>(log.pops.size()) - 1;
  flow.pop = pop;
  slot_open_[static_cast<std::size_t>(slot)] = 0;
  flow.filled_rate_bytes_per_s = rate_bytes_per_s;
  log.freezes.push_back(slot);
  resolved_.push_back(slot);
  for (std::size_t i = 0; i < flow.links.size(); ++i) {
    const int link = flow.links[i];
    const int shares = shares_on(flow, i);
    for (int k = 0; k < shares; ++k) link_fill_[link].remaining_bytes_per_s -= rate_bytes_per_s;
    link_fill_[link].frozen += shares;
    std::vector<LinkStep>& steps = link_fill_[link].steps;
    if (!steps.empty() && steps.back().pop == pop) {
      steps.back().frozen = link_fill_[link].frozen;
      steps.back().remaining_bytes_per_s = link_fill_[link].remaining_bytes_per_s;
    } else {
      steps.push_back({pop, link_fill_[link].frozen, link_fill_[link].remaining_bytes_per_s});
    }
    if (link_fill_[link].mark != link_mark_epoch_) {
      link_fill_[link].mark = link_mark_epoch_;
      frozen_now_.push_back(link);
    }
  }
  const int cap_pos = level_pos_[capacity_.size() + static_cast<std::size_t>(slot)];
  if (cap_pos >= 0) remove_level(cap_pos);
}

// Runs the level heap (entries appended by the caller) to the end, appending pops to the
// log.
void FlowNetwork::fill(int index) {
  FillingLog& log = logs_[static_cast<std::size_t>(index)];
  const int link_count = static_cast<int>(capacity_.size());
  // Heapify first (sift_level assumes a heap around the moved entry), then index.
  std::make_heap(heap_.begin(), heap_.end(), [](const HeapEntry& a, const HeapEntry& b) {
    return level_after(a.share_bytes_per_s, a.tag, b.share_bytes_per_s, b.tag);
  });
  for (int pos = 0; pos < static_cast<int>(heap_.size()); ++pos) {
    place_level(pos, heap_[static_cast<std::size_t>(pos)]);
  }
  while (!heap_.empty()) {
    const HeapEntry top = heap_.front();
    remove_level(0);
    Pop pop{top.share_bytes_per_s, top.tag, top.share_bytes_per_s, top.tag,
            static_cast<int>(log.freezes.size())};
    if (!log.pops.empty()) {
      const Pop& prev = log.pops.back();
      if (level_after(prev.max_share_bytes_per_s, prev.max_tag, pop.share_bytes_per_s, pop.tag)) {
        pop.max_share_bytes_per_s = prev.max_share_bytes_per_s;
        pop.max_tag = prev.max_tag;
      }
    }
    log.pops.push_back(pop);
    ++link_mark_epoch_;
    frozen_now_.clear();
    if (top.item >= link_count) {
      freeze(log, top.item - link_count, top.share_bytes_per_s);
    } else {
      const int link = top.item;
      link_fill_[link].popped_at = static_cast<int>(log.pops.size()) - 1;
      link_fill_[link].mark = link_mark_epoch_;  // saturated: not re-keyed
      // Every member is live here (taken flows were pruned at the settle's start).
      for (const LinkMember& member : link_members_[link]) {
        assert(is_live(member));
        if (slot_open_[static_cast<std::size_t>(member.slot)]) {
          freeze(log, member.slot, top.share_bytes_per_s);
        }
      }
    }
    // Re-key, once per pop, every link whose share changed.
    for (int link : frozen_now_) {
      const int pos = level_pos_[static_cast<std::size_t>(link)];
      if (pos < 0) continue;
      if (link_fill_[link].members == link_fill_[link].frozen) {
        remove_level(pos);
        continue;
      }
      heap_[static_cast<std::size_t>(pos)].share_bytes_per_s = link_share(link);
      sift_level(pos);
    }
  }
}

}  // namespace tilesim
