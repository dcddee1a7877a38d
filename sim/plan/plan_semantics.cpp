#include "sim/plan/plan_semantics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace tilesim {

void RankSemantics::clear() {
  prereq_begin_.assign(1, 0);
  prereqs_.clear();
  allocation_begin_.assign(1, 0);
  allocations_.clear();
  streams_.clear();
  group_of_.clear();
  group_begin_.assign(1, 0);
  comm_ops_.clear();
  group_ids_.clear();
  compute_ops_.clear();
  free_ops_.clear();
}

SemanticsDeriver::SemanticsDeriver(const Plan& plan, SemanticsOptions options)
    : plan_(&plan),
      options_(options),
      hazards_(plan.objects.size()),
      live_(plan.objects.size(), 0) {}

SemanticsDeriver::Hazard& SemanticsDeriver::hazard(int rank, int object) {
  Hazard& h = hazards_[static_cast<std::size_t>(object)];
  if (!h.touched) {
    h.touched = true;
    touched_.push_back(object);
    const DataObject& o = plan_->object(object);
    live_[static_cast<std::size_t>(object)] = o.input && o.home_rank == rank ? 1 : 0;
  }
  return h;
}

RankSemantics SemanticsDeriver::derive(int rank) {
  RankSemantics out;
  derive(rank, out);
  return out;
}

void SemanticsDeriver::derive(int rank, RankSemantics& out) {
  const RankProgram& program = plan_->programs.at(static_cast<std::size_t>(rank));
  const int n = static_cast<int>(program.size());
  // Reset what the previous rank touched (here, so a derivation that threw leaves no trace),
  // keeping the readers' capacity.
  for (int obj : touched_) {
    Hazard& h = hazards_[static_cast<std::size_t>(obj)];
    h.last_writer = -1;
    h.touched = false;
    h.readers_since_write.clear();
  }
  touched_.clear();
  out.clear();
  out.streams_.reserve(static_cast<std::size_t>(n));
  out.group_of_.reserve(static_cast<std::size_t>(n));
  out.prereq_begin_.reserve(static_cast<std::size_t>(n) + 1);
  out.allocation_begin_.reserve(static_cast<std::size_t>(n) + 1);
  group_runs_.clear();
  int last_compute = -1;
  for (int i = 0; i < n; ++i) {
    const Op& op = program.op(i);
    const Stream stream = stream_of(op.kind);
    preds_.clear();
    for (int a : program.after(i)) {
      if (a < 0 || a >= i) {
        throw PlanError({rank, i}, fmt::format("{}: 'after' names op {}, which is not earlier",
                                               plan_->describe({rank, i}), a));
      }
      preds_.push_back(a);
    }
    if (stream == Stream::compute) {
      if (options_.fold_compute_stream && last_compute >= 0) preds_.push_back(last_compute);
      last_compute = i;
    }
    read_hazards_.clear();
    write_hazards_.clear();
    for (int obj : program.reads(i)) read_hazards_.push_back(&hazard(rank, obj));
    for (int obj : program.writes(i)) write_hazards_.push_back(&hazard(rank, obj));
    hazard_step(read_hazards_, write_hazards_, i, preds_);

    for (int obj : program.writes(i)) {
      std::uint8_t& is_live = live_[static_cast<std::size_t>(obj)];
      bool live = is_live != 0;
      if (allocation_step(op.kind, live)) out.allocations_.push_back(obj);
      is_live = live ? 1 : 0;
    }
    out.allocation_begin_.push_back(static_cast<std::uint32_t>(out.allocations_.size()));

    finish_prerequisites(
        preds_, i, options_.fold_compute_stream, [](std::int32_t) { return false; },
        [&](std::int32_t p) { return stream_of(program.op(p).kind) == Stream::compute; });
    out.prereqs_.insert(out.prereqs_.end(), preds_.begin(), preds_.end());
    out.prereq_begin_.push_back(static_cast<std::uint32_t>(out.prereqs_.size()));

    out.streams_.push_back(stream);
    std::int32_t group = -1;
    switch (stream) {
      case Stream::compute:
        out.compute_ops_.push_back(i);
        break;
      case Stream::host:
        out.free_ops_.push_back(i);
        break;
      case Stream::comm:
        if (out.group_ids_.empty() || op.comm_group != out.group_ids_.back()) {
          group_runs_.emplace_back(op.comm_group, i);
          out.group_ids_.push_back(op.comm_group);
          out.group_begin_.push_back(out.group_begin_.back());
        }
        out.comm_ops_.push_back(i);
        ++out.group_begin_.back();
        group = static_cast<std::int32_t>(out.group_ids_.size()) - 1;
        break;
    }
    out.group_of_.push_back(group);
  }

  // A group id must form one run of consecutive comm ops; name the second run of the
  // smallest repeated id, so the message does not depend on which run is met first.
  std::sort(group_runs_.begin(), group_runs_.end());
  for (std::size_t k = 1; k < group_runs_.size(); ++k) {
    if (group_runs_[k].first == group_runs_[k - 1].first) {
      const OpId at{rank, group_runs_[k].second};
      throw PlanError(at, fmt::format("{}: comm group {} is not consecutive in the program",
                                      plan_->describe(at), group_runs_[k].first));
    }
  }
}

}  // namespace tilesim
