#include "sim/plan/plan_tracker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace tilesim {

namespace {

// A send or recv that the matching found no partner for.
PlanError unmatched_comm_error(const Plan& plan, OpId id) {
  const bool send =
      plan.programs[static_cast<std::size_t>(id.rank)].op(id.index).kind == OpKind::send;
  return PlanError(id,
                   fmt::format("{} has no matching {}", plan.describe(id), send ? "recv" : "send"));
}

bool on_comm_stream(OpKind kind) { return stream_of(kind) == Stream::comm; }

}  // namespace

PlanTracker::PlanTracker(const Plan& plan, int peer_ranks) : plan_(&plan) {
  ranks_.resize(static_cast<std::size_t>(plan.ranks));
  {
    SemanticsDeriver deriver(plan, SemanticsOptions{.fold_compute_stream = true});
    RankSemantics sem;
    for (int r = 0; r < plan.ranks; ++r) build_rank(deriver, sem, r);
  }
  match_comm(peer_ranks);
  for (int id = 0; id < static_cast<int>(plan.objects.size()); ++id) {
    const DataObject& obj = plan.object(id);
    if (obj.input && obj.home_rank < plan.ranks) allocate(obj.home_rank, id);
  }
  for (auto& rs : ranks_) rs.memory.peak_bytes = rs.memory.live_bytes;
  for (int r = 0; r < plan.ranks; ++r) {
    auto& rs = ranks_[static_cast<std::size_t>(r)];
    rs.memory.peak_breakdown = rs.memory.live_by_tensor;
    for (std::size_t i = 0; i + 1 < rs.op.size(); ++i) {
      if (rs.op[i].pending == 0) worklist_.push_back({r, static_cast<int>(i)});
    }
  }
}

void PlanTracker::build_rank(SemanticsDeriver& deriver, RankSemantics& sem, int rank) {
  deriver.derive(rank, sem);
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const int n = static_cast<int>(sem.size());
  total_ops_ += static_cast<std::size_t>(n);
  rs.op.assign(static_cast<std::size_t>(n) + 1, OpState{});
  rs.partner.assign(static_cast<std::size_t>(n), OpId{-1, -1});

  // Successor lists in CSR form. Prerequisites are listed by op and ascending within an op,
  // so filling in that order keeps each successor list sorted.
  std::size_t edges = 0;
  for (int i = 0; i < n; ++i) {
    const auto pre = sem.prerequisites(i);
    rs.op[static_cast<std::size_t>(i)].pending = static_cast<std::uint32_t>(pre.size());
    for (int p : pre) ++rs.op[static_cast<std::size_t>(p) + 1].succ_begin;
    edges += pre.size();
    const auto mem = sem.allocations(i);
    rs.mem.insert(rs.mem.end(), mem.begin(), mem.end());
    rs.op[static_cast<std::size_t>(i) + 1].mem_begin = static_cast<std::uint32_t>(rs.mem.size());
    rs.op[static_cast<std::size_t>(i)].group = sem.group_of(i);
  }
  for (int i = 0; i < n; ++i) {
    rs.op[static_cast<std::size_t>(i) + 1].succ_begin +=
        rs.op[static_cast<std::size_t>(i)].succ_begin;
  }
  rs.succ.resize(edges);
  std::vector<std::uint32_t>& fill = fill_scratch_;
  fill.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    fill[static_cast<std::size_t>(i)] = rs.op[static_cast<std::size_t>(i)].succ_begin;
  for (int i = 0; i < n; ++i) {
    for (int p : sem.prerequisites(i)) rs.succ[fill[static_cast<std::size_t>(p)]++] = i;
  }

  // Group g posts when its ops are ready and, for g > 0, group g - 1 has completed.
  rs.groups.resize(static_cast<std::size_t>(sem.group_count()));
  for (int g = 0; g < sem.group_count(); ++g) {
    const auto ops = sem.group_ops(g);
    Group& group = rs.groups[static_cast<std::size_t>(g)];
    group.begin = static_cast<std::uint32_t>(rs.comm_ops.size());
    rs.comm_ops.insert(rs.comm_ops.end(), ops.begin(), ops.end());
    group.end = static_cast<std::uint32_t>(rs.comm_ops.size());
    group.pending = static_cast<std::uint32_t>(ops.size()) + (g > 0 ? 1 : 0);
    group.remaining = static_cast<std::uint32_t>(ops.size());
  }
}

void PlanTracker::pair_up(OpId send, OpId recv) {
  ranks_[static_cast<std::size_t>(send.rank)].partner[static_cast<std::size_t>(send.index)] = recv;
  ranks_[static_cast<std::size_t>(recv.rank)].partner[static_cast<std::size_t>(recv.index)] = send;
}

void PlanTracker::match_comm_by_offset(int peer_ranks) {
  const int k = plan_->ranks;
  const int p = peer_ranks;
  if (p % k != 0) throw std::invalid_argument("an offset quotient's classes divide its ranks");
  // Key (sending class, offset) = s * P + t; within a key every send is on rank s and every
  // recv on rank (s + t) mod K, listed in program order, so the k-th pairs with the k-th.
  struct Side {
    std::int64_t key;
    OpId op;
  };
  std::vector<Side> sends, recvs;
  for (int r = 0; r < k; ++r) {
    const RankProgram& program = plan_->programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (!on_comm_stream(op.kind)) continue;
      if (op.peer < 0 || op.peer >= p || op.peer == r) {
        throw PlanError({r, i},
                        fmt::format("{}: invalid peer rank {}", plan_->describe({r, i}), op.peer));
      }
      if (op.kind == OpKind::send) {
        const int t = (op.peer - r + p) % p;
        sends.push_back({static_cast<std::int64_t>(r) * p + t, {r, i}});
      } else {
        const int t = (r - op.peer + p) % p;
        const int from_class = op.peer % k;
        recvs.push_back({static_cast<std::int64_t>(from_class) * p + t, {r, i}});
      }
    }
  }
  auto by_key = [](const Side& a, const Side& b) { return a.key < b.key; };
  std::stable_sort(sends.begin(), sends.end(), by_key);
  std::stable_sort(recvs.begin(), recvs.end(), by_key);
  auto unmatched = [&](OpId id) { return unmatched_comm_error(*plan_, id); };
  std::size_t a = 0, b = 0;
  while (a < sends.size() || b < recvs.size()) {
    if (b == recvs.size() || (a < sends.size() && sends[a].key < recvs[b].key)) {
      throw unmatched(sends[a].op);
    }
    if (a == sends.size() || recvs[b].key < sends[a].key) throw unmatched(recvs[b].op);
    const OpId s = sends[a++].op, rv = recvs[b++].op;
    // The representative receives the shifted image of the sent object under its own name:
    // the two sides need only move the same bytes.
    const int s_obj = plan_->programs[static_cast<std::size_t>(s.rank)].reads(s.index)[0];
    const int r_obj = plan_->programs[static_cast<std::size_t>(rv.rank)].writes(rv.index)[0];
    if (plan_->object(s_obj).bytes != plan_->object(r_obj).bytes) {
      throw PlanError(s, fmt::format("{} is matched with {}, which expects another object",
                                     plan_->describe(s), plan_->describe(rv)));
    }
    pair_up(s, rv);
  }
}

void PlanTracker::match_comm(int peer_ranks) {
  if (peer_ranks > plan_->ranks) {
    match_comm_by_offset(peer_ranks);
    return;
  }
  // A symmetric quotient (make_pass_kv_ring_classes_plan, ring_schedule.hpp) holds objects of
  // ranks it does not hold; a class representative receives its class's object under its own
  // name, so there a send and its recv need only move the same bytes.
  bool quotient = false;
  for (const DataObject& obj : plan_->objects) quotient = quotient || obj.home_rank >= plan_->ranks;
  // k-th send a->b matches the k-th recv b<-a.
  std::map<std::pair<int, int>, std::vector<int>> sends;  // (src, dst) -> send op indices
  std::map<std::pair<int, int>, std::vector<int>> recvs;  // (src, dst) -> recv op indices
  for (int r = 0; r < plan_->ranks; ++r) {
    const RankProgram& program = plan_->programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (!on_comm_stream(op.kind)) continue;
      if (op.peer < 0 || op.peer >= plan_->ranks || op.peer == r) {
        throw PlanError({r, i},
                        fmt::format("{}: invalid peer rank {}", plan_->describe({r, i}), op.peer));
      }
      if (op.kind == OpKind::send) {
        sends[{r, op.peer}].push_back(i);
      } else {
        recvs[{op.peer, r}].push_back(i);
      }
    }
  }
  auto unmatched = [&](OpId id) { return unmatched_comm_error(*plan_, id); };
  for (const auto& [pair, send_ops] : sends) {
    auto it = recvs.find(pair);
    const std::size_t matched = it == recvs.end() ? 0 : it->second.size();
    for (std::size_t k = 0; k < send_ops.size(); ++k) {
      const OpId s{pair.first, send_ops[k]};
      if (k >= matched) throw unmatched(s);
      const OpId rv{pair.second, it->second[k]};
      const int s_obj = plan_->programs[static_cast<std::size_t>(s.rank)].reads(s.index)[0];
      const int r_obj = plan_->programs[static_cast<std::size_t>(rv.rank)].writes(rv.index)[0];
      const bool quotient_match =
          quotient && plan_->object(s_obj).bytes == plan_->object(r_obj).bytes;
      if (s_obj != r_obj && !quotient_match) {
        throw PlanError(s, fmt::format("{} is matched with {}, which expects another object",
                                       plan_->describe(s), plan_->describe(rv)));
      }
      pair_up(s, rv);
    }
  }
  for (const auto& [pair, recv_ops] : recvs) {
    auto it = sends.find(pair);
    const std::size_t matched = it == sends.end() ? 0 : it->second.size();
    if (recv_ops.size() > matched) throw unmatched({pair.second, recv_ops[matched]});
  }
}

void PlanTracker::allocate(int rank, int object) {
  ranks_[static_cast<std::size_t>(rank)].memory.allocate(plan_->object(object));
}

void PlanTracker::release(int rank, int object) {
  ranks_[static_cast<std::size_t>(rank)].memory.release(plan_->object(object));
}

void PlanTracker::allocate_for(int rank, int op) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const auto i = static_cast<std::size_t>(op);
  const bool frees = plan_->programs[static_cast<std::size_t>(rank)].op(op).kind == OpKind::free;
  for (std::uint32_t k = rs.op[i].mem_begin; k < rs.op[i + 1].mem_begin; ++k) {
    if (frees) {
      release(rank, rs.mem[k]);
    } else {
      allocate(rank, rs.mem[k]);
    }
  }
}

void PlanTracker::post_group(int rank, int group) {
  RankState& rs = ranks_[static_cast<std::size_t>(rank)];
  const RankProgram& program = plan_->programs[static_cast<std::size_t>(rank)];
  const Group& g = rs.groups[static_cast<std::size_t>(group)];
  for (std::uint32_t k = g.begin; k < g.end; ++k) {
    const int i = rs.comm_ops[k];
    rs.op[static_cast<std::size_t>(i)].state = State::posted;
    const Op& op = program.op(i);
    if (op.kind == OpKind::recv) allocate_for(rank, i);
    const OpId partner = rs.partner[static_cast<std::size_t>(i)];
    const auto& ps = ranks_[static_cast<std::size_t>(partner.rank)];
    if (ps.op[static_cast<std::size_t>(partner.index)].state == State::posted) {
      if (op.kind == OpKind::send) {
        pending_transfers_.push_back({{rank, i}, partner, program.reads(i)[0]});
      } else {
        pending_transfers_.push_back({partner, {rank, i}, program.writes(i)[0]});
      }
    }
  }
}

void PlanTracker::make_ready(OpId id) {
  RankState& rs = ranks_[static_cast<std::size_t>(id.rank)];
  const RankProgram& program = plan_->programs[static_cast<std::size_t>(id.rank)];
  const Op& op = program.op(id.index);
  switch (op.kind) {
    case OpKind::compute:
    case OpKind::merge:
      rs.op[static_cast<std::size_t>(id.index)].state = State::posted;
      allocate_for(id.rank, id.index);
      pending_compute_.push_back(id);
      break;
    case OpKind::free:
      allocate_for(id.rank, id.index);
      complete(id);
      break;
    case OpKind::send:
    case OpKind::recv: {
      rs.op[static_cast<std::size_t>(id.index)].state = State::ready;
      const int g = rs.op[static_cast<std::size_t>(id.index)].group;
      if (--rs.groups[static_cast<std::size_t>(g)].pending == 0) post_group(id.rank, g);
      break;
    }
  }
}

void PlanTracker::complete(OpId id) {
  RankState& rs = ranks_[static_cast<std::size_t>(id.rank)];
  const auto i = static_cast<std::size_t>(id.index);
  rs.op[i].state = State::done;
  ++done_ops_;
  for (std::uint32_t k = rs.op[i].succ_begin; k < rs.op[i + 1].succ_begin; ++k) {
    const int s = rs.succ[k];
    if (--rs.op[static_cast<std::size_t>(s)].pending == 0) worklist_.push_back({id.rank, s});
  }
  const int g = rs.op[i].group;
  if (g >= 0 && --rs.groups[static_cast<std::size_t>(g)].remaining == 0) {
    const auto next = static_cast<std::size_t>(g) + 1;
    if (next < rs.groups.size() && --rs.groups[next].pending == 0) {
      post_group(id.rank, static_cast<int>(next));
    }
  }
}

void PlanTracker::poll(std::vector<OpId>& compute_ready, std::vector<Transfer>& transfers_ready) {
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

void PlanTracker::finish(OpId op) { complete(op); }

void PlanTracker::finish_transfer(const Transfer& transfer) {
  complete(transfer.send);
  complete(transfer.recv);
}

bool PlanTracker::is_done(OpId op) const {
  return ranks_[static_cast<std::size_t>(op.rank)].op[static_cast<std::size_t>(op.index)].state ==
         State::done;
}

std::vector<OpId> PlanTracker::first_blocked(std::size_t limit) const {
  std::vector<OpId> out;
  for (int r = 0; r < plan_->ranks && out.size() < limit; ++r) {
    const auto& rs = ranks_[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i + 1 < rs.op.size(); ++i) {
      if (rs.op[i].state != State::done) {
        out.push_back({r, static_cast<int>(i)});
        break;
      }
    }
  }
  return out;
}

}  // namespace tilesim
