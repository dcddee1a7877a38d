#include "sim/plan/windowed_tracker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tilesim {

WindowedTracker::WindowedTracker(ProgramSource& source, int lookahead_ops, int peer_ranks)
    : source_(source),
      plan_(source.plan()),
      lookahead_ops_(std::max(lookahead_ops, 1)),
      peer_ranks_(peer_ranks > 0 ? peer_ranks : source.plan().ranks) {
  if (peer_ranks_ % plan_.ranks != 0) {
    throw std::invalid_argument("an offset quotient's classes divide its ranks");
  }
  ranks_.resize(static_cast<std::size_t>(plan_.ranks));
  for (const DataObject& obj : plan_.objects) quotient_ = quotient_ || obj.home_rank >= plan_.ranks;
  for (int r = 0; r < plan_.ranks; ++r) keep_ahead(r);
  for (int id = 0; id < static_cast<int>(plan_.objects.size()); ++id) {
    const DataObject& obj = plan_.object(id);
    if (obj.input && obj.home_rank < plan_.ranks) allocate(obj.home_rank, id);
  }
  for (auto& rs : ranks_) {
    rs.memory.peak_bytes = rs.memory.live_bytes;
    rs.memory.peak_breakdown = rs.memory.live_by_tensor;
  }
  for (int r = 0; r < plan_.ranks; ++r) {
    const RankState& rs = ranks_[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < rs.op.size(); ++i) {
      if (rs.op[i].pending == 0) worklist_.push_back({r, rs.base + static_cast<int>(i)});
    }
  }
  started_ = true;
}

void WindowedTracker::keep_ahead(int rank) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  while (!rs.complete && rs.derived - rs.first_undone < lookahead_ops_) {
    if (!source_.extend(rank)) {
      rs.complete = true;
      break;
    }
    derive_new(rank);
  }
  max_window_ops_ = std::max(max_window_ops_, rs.op.size());
}

void WindowedTracker::derive_new(int rank) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const int end = static_cast<int>(plan_.programs[static_cast<std::size_t>(rank)].size());
  rs.piece_first_group = rs.group_base + static_cast<int>(rs.groups.size());
  for (int i = rs.derived; i < end; ++i) derive_op(rank, i);
  rs.derived = end;
}

namespace {
constexpr std::size_t kHazardScanMax = 32;  // longer hazard lists are looked up by index
}  // namespace

std::size_t WindowedTracker::hazard_slot(int rank, int object) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  if (rs.hazard_index.empty()) {
    for (std::size_t k = rs.hazards.size(); k-- > 0;) {
      if (rs.hazards[k].first == object) return k;
    }
  } else if (const auto it = rs.hazard_index.find(object); it != rs.hazard_index.end()) {
    return it->second;
  }
  const DataObject& o = plan_.object(object);
  rs.hazards.emplace_back(object, Hazard{});
  rs.hazards.back().second.live = o.input && o.home_rank == rank;
  const std::size_t slot = rs.hazards.size() - 1;
  if (!rs.hazard_index.empty()) {
    rs.hazard_index.emplace(object, slot);
  } else if (rs.hazards.size() > kHazardScanMax) {
    index_hazards(rs);
  }
  return slot;
}

void WindowedTracker::index_hazards(RankState& rs) {
  rs.hazard_index.clear();
  if (rs.hazards.size() <= kHazardScanMax) return;
  for (std::size_t k = 0; k < rs.hazards.size(); ++k)
    rs.hazard_index.emplace(rs.hazards[k].first, k);
}

void WindowedTracker::add_successor(RankState& rs, int prerequisite, int successor) {
  std::int32_t node = rs.succ_free;
  if (node == kNone) {
    node = static_cast<std::int32_t>(rs.succ.size());
    rs.succ.push_back({});
  } else {
    rs.succ_free = rs.succ[static_cast<std::size_t>(node)].next;
  }
  rs.succ[static_cast<std::size_t>(node)] = {successor, kNone};
  OpState& p = rs.op[static_cast<std::size_t>(prerequisite - rs.base)];
  if (p.succ_tail == kNone) {
    p.succ_head = node;
  } else {
    rs.succ[static_cast<std::size_t>(p.succ_tail)].next = node;
  }
  p.succ_tail = node;
}

void WindowedTracker::derive_op(int rank, int i) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const RankProgram& program = plan_.programs[static_cast<std::size_t>(rank)];
  const Op& op = program.op(i);
  const Stream stream = stream_of(op.kind);
  preds_.clear();
  for (int a : program.after(i)) {
    if (a < 0 || a >= i) {
      throw PlanError({rank, i}, fmt::format("{}: 'after' names op {}, which is not earlier",
                                             plan_.describe({rank, i}), a));
    }
    preds_.push_back(a);
  }
  if (stream == Stream::compute) {
    if (rs.last_compute >= 0) preds_.push_back(rs.last_compute);
    rs.last_compute = i;
  }
  const auto reads = program.reads(i);
  const auto writes = program.writes(i);
  // Slots first: a new hazard entry may move the others.
  hazard_slots_.clear();
  for (int obj : reads) hazard_slots_.push_back(hazard_slot(rank, obj));
  for (int obj : writes) hazard_slots_.push_back(hazard_slot(rank, obj));
  read_hazards_.clear();
  write_hazards_.clear();
  for (std::size_t k = 0; k < hazard_slots_.size(); ++k) {
    (k < reads.size() ? read_hazards_ : write_hazards_)
        .push_back(&rs.hazards[hazard_slots_[k]].second);
  }
  hazard_step(read_hazards_, write_hazards_, i, preds_);

  OpState state;
  state.mem_begin = rs.mem_base + static_cast<std::uint32_t>(rs.mem.size());
  for (std::size_t k = 0; k < writes.size(); ++k) {
    if (allocation_step(op.kind, static_cast<Hazard*>(write_hazards_[k])->live)) {
      rs.mem.push_back(writes[k]);
    }
  }
  state.mem_end = rs.mem_base + static_cast<std::uint32_t>(rs.mem.size());

  // Finished prerequisites are not counted (see the header).
  finish_prerequisites(
      preds_, i, true, [&](std::int32_t p) { return is_done(rs, p); },
      [&](std::int32_t p) { return stream_of(program.op(p).kind) == Stream::compute; });
  rs.op.push_back(state);
  for (int p : preds_) {
    ++rs.op.back().pending;
    add_successor(rs, p, i);
  }
  const bool ready_at_once = started_ && rs.op.back().pending == 0;
  if (ready_at_once && stream != Stream::comm) {
    throw std::logic_error(
        fmt::format("windowed tracker: {} was generated after its prerequisites finished (the "
                    "lookahead of {} ops is too short for this program)",
                    plan_.describe({rank, i}), lookahead_ops_));
  }
  ++total_ops_;

  if (stream == Stream::comm) {
    const bool continues = !rs.groups.empty() && op.comm_group == rs.last_group_id;
    if (continues && rs.group_base + static_cast<int>(rs.groups.size()) <= rs.piece_first_group) {
      // Its count would have been complete before this op was known.
      throw std::logic_error(fmt::format(
          "windowed tracker: {} continues a comm group of the previous piece of its program",
          plan_.describe({rank, i})));
    }
    if (!continues) {
      Group g;
      const int index = rs.group_base + static_cast<int>(rs.groups.size());
      g.pending = index > 0 ? 1 : 0;
      g.ops_begin = g.ops_end = rs.group_ops_base + static_cast<std::uint32_t>(rs.group_ops.size());
      rs.groups.push_back(g);
      rs.last_group_id = op.comm_group;
    }
    Group& g = rs.groups.back();
    rs.group_ops.push_back(i);  // the last group's ops end the list
    ++g.ops_end;
    ++g.pending;
    ++g.remaining;
    rs.op.back().group = rs.group_base + static_cast<int>(rs.groups.size()) - 1;
    match(rank, i, op);
    // A send or receive whose prerequisites finished before it was generated (the backward's
    // first receives wait only for frees of the forward) was ready in PlanTracker at the last
    // one's completion, which only counted toward its group; the group cannot have been posted
    // since (its predecessor completes after it exists, checked in complete()), so readying it
    // now, not through the worklist, posts the group at the same completion as there.
    if (ready_at_once) make_ready({rank, i});
  }
}

void WindowedTracker::match(int rank, int index, const Op& op) {
  if (op.peer < 0 || op.peer >= peer_ranks_ || op.peer == rank) {
    throw PlanError({rank, index}, fmt::format("{}: invalid peer rank {}",
                                               plan_.describe({rank, index}), op.peer));
  }
  const bool send = op.kind == OpKind::send;
  // The list of the sending rank, keyed by the receiving rank; in an offset quotient
  // (class_plan.hpp keep_class_programs) by the offset t from sender to receiver, the k-th send
  // of class s at offset t pairing with the k-th recv at offset t from a rank of class s
  // (PlanTracker::match_comm_by_offset).
  int src = send ? rank : op.peer, key = send ? op.peer : rank;
  if (offset_quotient()) {
    key = send ? (op.peer - rank + peer_ranks_) % peer_ranks_
               : (rank - op.peer + peer_ranks_) % peer_ranks_;
    src %= plan_.ranks;
  }
  // At most one of the two lists holds ops waiting for a partner; `head` is its first.
  auto& lists = ranks_[static_cast<std::size_t>(src)].unmatched_to;
  auto found =
      std::find_if(lists.begin(), lists.end(), [&](const auto& e) { return e.first == key; });
  if (found == lists.end()) found = lists.insert(lists.end(), {key, Unmatched{}});
  Unmatched& u = found->second;
  std::vector<OpId>& other = send ? u.recvs : u.sends;
  const OpId mine{rank, index};
  if (u.head >= other.size()) {
    (send ? u.sends : u.recvs).push_back(mine);
    return;
  }
  const OpId theirs = other[u.head++];
  if (u.head == other.size()) {
    // Nothing waits: drop the entry, so that a rank whose pairs change every step (pass-Q's
    // partials go to r - s) keeps a short list.
    *found = std::move(lists.back());
    lists.pop_back();
  } else if (u.head >= 64 && 2 * u.head >= other.size()) {
    // One side may stay ahead for the whole run: drop the matched prefix now and then, so the
    // list holds what waits, not every op of the pair.
    other.erase(other.begin(), other.begin() + static_cast<std::ptrdiff_t>(u.head));
    u.head = 0;
  }
  const OpId s = send ? mine : theirs;
  const OpId rv = send ? theirs : mine;
  const int s_obj = plan_.programs[static_cast<std::size_t>(s.rank)].reads(s.index)[0];
  const int r_obj = plan_.programs[static_cast<std::size_t>(rv.rank)].writes(rv.index)[0];
  const bool quotient_match = quotient_ && plan_.object(s_obj).bytes == plan_.object(r_obj).bytes;
  if (s_obj != r_obj && !quotient_match) {
    throw PlanError(s, fmt::format("{} is matched with {}, which expects another object",
                                   plan_.describe(s), plan_.describe(rv)));
  }
  state(s).partner = rv;
  state(rv).partner = s;
}

void WindowedTracker::allocate(int rank, int object) {
  ranks_[static_cast<std::size_t>(rank)].memory.allocate(plan_.object(object));
}

void WindowedTracker::release(int rank, int object) {
  ranks_[static_cast<std::size_t>(rank)].memory.release(plan_.object(object));
}

void WindowedTracker::allocate_for(int rank, int op) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const OpState& os = rs.op[static_cast<std::size_t>(op - rs.base)];
  const bool frees = plan_.programs[static_cast<std::size_t>(rank)].op(op).kind == OpKind::free;
  for (std::uint32_t k = os.mem_begin; k < os.mem_end; ++k) {
    const int obj = rs.mem[k - rs.mem_base];
    if (frees) {
      release(rank, obj);
    } else {
      allocate(rank, obj);
    }
  }
}

void WindowedTracker::post_group(int rank, int group) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const RankProgram& program = plan_.programs[static_cast<std::size_t>(rank)];
  const Group& g = rs.groups[static_cast<std::size_t>(group - rs.group_base)];
  for (std::uint32_t k = g.ops_begin; k < g.ops_end; ++k) {
    const int i = rs.group_ops[k - rs.group_ops_base];
    state({rank, i}).state = State::posted;
    const Op& op = program.op(i);
    if (op.kind == OpKind::recv) allocate_for(rank, i);
    const OpId partner = state({rank, i}).partner;
    if (partner.rank < 0 || state(partner).state != State::posted) continue;
    if (op.kind == OpKind::send) {
      pending_transfers_.push_back({{rank, i}, partner, program.reads(i)[0]});
    } else {
      pending_transfers_.push_back({partner, {rank, i}, program.writes(i)[0]});
    }
  }
}

void WindowedTracker::make_ready(OpId id) {
  RankState& rs = ranks_[static_cast<std::size_t>(id.rank)];
  const Op& op = plan_.programs[static_cast<std::size_t>(id.rank)].op(id.index);
  switch (op.kind) {
    case OpKind::compute:
    case OpKind::merge:
      state(id).state = State::posted;
      allocate_for(id.rank, id.index);
      pending_compute_.push_back(id);
      break;
    case OpKind::free:
      allocate_for(id.rank, id.index);
      complete(id);
      break;
    case OpKind::send:
    case OpKind::recv: {
      state(id).state = State::ready;
      const int g = state(id).group;
      if (--rs.groups[static_cast<std::size_t>(g - rs.group_base)].pending == 0) {
        post_group(id.rank, g);
      }
      break;
    }
  }
}

void WindowedTracker::complete(OpId id) {
  RankState& rs = ranks_[static_cast<std::size_t>(id.rank)];
  OpState& os = state(id);
  os.state = State::done;
  ++done_ops_;
  for (std::int32_t node = os.succ_head; node != kNone;) {
    SuccNode& n = rs.succ[static_cast<std::size_t>(node)];
    if (--rs.op[static_cast<std::size_t>(n.op - rs.base)].pending == 0) {
      worklist_.push_back({id.rank, n.op});
    }
    const std::int32_t next = n.next;
    n.next = rs.succ_free;
    rs.succ_free = node;
    node = next;
  }
  os.succ_head = os.succ_tail = kNone;
  const int g = os.group;
  if (g >= 0 && --rs.groups[static_cast<std::size_t>(g - rs.group_base)].remaining == 0) {
    const auto next = static_cast<std::size_t>(g + 1 - rs.group_base);
    if (next < rs.groups.size()) {
      if (--rs.groups[next].pending == 0) post_group(id.rank, g + 1);
    } else if (!rs.complete) {
      throw std::logic_error(fmt::format(
          "windowed tracker: rank {} completed comm group {} before the next was generated (the "
          "lookahead of {} ops is too short for this program)",
          id.rank, g, lookahead_ops_));
    }
  }
  advance_front(id.rank);
}

void WindowedTracker::advance_front(int rank) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const int end = rs.base + static_cast<int>(rs.op.size());
  while (rs.first_undone < end &&
         rs.op[static_cast<std::size_t>(rs.first_undone - rs.base)].state == State::done) {
    ++rs.first_undone;
  }
  const int finished = rs.first_undone - rs.base;
  if (finished >= std::max(64, static_cast<int>(rs.op.size()) / 2)) compact(rank);
  keep_ahead(rank);
}

void WindowedTracker::compact(int rank) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const auto drop = static_cast<std::ptrdiff_t>(rs.first_undone - rs.base);
  rs.op.erase(rs.op.begin(), rs.op.begin() + drop);
  rs.base = rs.first_undone;
  const std::uint32_t mem_cut = rs.op.empty()
                                    ? rs.mem_base + static_cast<std::uint32_t>(rs.mem.size())
                                    : rs.op.front().mem_begin;
  rs.mem.erase(rs.mem.begin(), rs.mem.begin() + (mem_cut - rs.mem_base));
  rs.mem_base = mem_cut;
  std::size_t groups_done = 0;
  while (groups_done < rs.groups.size() && rs.groups[groups_done].remaining == 0 &&
         groups_done + 1 < rs.groups.size()) {
    ++groups_done;
  }
  rs.groups.erase(rs.groups.begin(), rs.groups.begin() + static_cast<std::ptrdiff_t>(groups_done));
  rs.group_base += static_cast<int>(groups_done);
  if (!rs.groups.empty()) {
    const std::uint32_t ops_cut = rs.groups.front().ops_begin;
    rs.group_ops.erase(rs.group_ops.begin(), rs.group_ops.begin() + (ops_cut - rs.group_ops_base));
    rs.group_ops_base = ops_cut;
  }
  // Hazards on finished ops only order what is already done: forget them.
  std::erase_if(rs.hazards, [&](std::pair<int, Hazard>& entry) {
    Hazard& h = entry.second;
    if (h.last_writer >= 0 && is_done(rs, h.last_writer)) h.last_writer = -1;
    std::erase_if(h.readers_since_write, [&](int reader) { return is_done(rs, reader); });
    const DataObject& o = plan_.object(entry.first);
    const bool live_at_start = o.input && o.home_rank == rank;
    return h.last_writer < 0 && h.readers_since_write.empty() && h.live == live_at_start;
  });
  index_hazards(rs);  // the slots moved
  plan_.programs[static_cast<std::size_t>(rank)].discard_before(rs.base);
  source_.discard_before(rank, rs.base);
}

void WindowedTracker::poll(std::vector<OpId>& compute_ready,
                           std::vector<Transfer>& transfers_ready) {
  while (worklist_head_ < worklist_.size()) {
    const OpId id = worklist_[worklist_head_++];
    make_ready(id);
  }
  worklist_.clear();
  worklist_head_ = 0;
  compute_ready.insert(compute_ready.end(), pending_compute_.begin(), pending_compute_.end());
  transfers_ready.insert(transfers_ready.end(), pending_transfers_.begin(),
                         pending_transfers_.end());
  pending_compute_.clear();
  pending_transfers_.clear();
}

bool WindowedTracker::all_done() const {
  for (const RankState& rs : ranks_) {
    if (!rs.complete) return false;
  }
  return done_ops_ == total_ops_;
}

std::vector<OpId> WindowedTracker::first_blocked(std::size_t limit) const {
  std::vector<OpId> out;
  for (int r = 0; r < plan_.ranks && out.size() < limit; ++r) {
    const RankState& rs = ranks_[static_cast<std::size_t>(r)];
    if (rs.first_undone < rs.base + static_cast<int>(rs.op.size())) {
      out.push_back({r, rs.first_undone});
    }
  }
  return out;
}

}  // namespace tilesim
