#include "runtime/executor/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <thread>

#include "runtime/executor/op_tasks.hpp"
#include "runtime/executor/rank_failure.hpp"

namespace tilesim::runtime {
namespace {

// Whether an op issued on `after` waits for an earlier op issued on `before`.
bool ordered(const Backend& backend, Stream before, Stream after) {
  if (before == Stream::host || after == Stream::host) return false;
  if (before == Stream::compute && after == Stream::compute) return true;
  return backend.orders_across_streams();
}

}  // namespace

Executor::Executor(const Plan& plan, int rank, Backend& backend, ExecutorOptions options)
    : plan_(plan), rank_(rank), backend_(backend), options_(options), deps_(plan, rank) {
  const RankProgram& program = plan.programs.at(static_cast<std::size_t>(rank));
  const std::size_t n = program.size();
  tags_.assign(n, 0);
  issued_.assign(n, false);
  done_.assign(n, false);
  present_.assign(plan.objects.size(), false);
  std::map<std::pair<int, int>, int> counts;  // (kind, peer) -> ops so far
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = program.op(static_cast<int>(i));
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      tags_[i] = counts[{static_cast<int>(op.kind), op.peer}]++;
    }
  }
}

void Executor::ensure(int object, ObjectFill fill) {
  if (present_[static_cast<std::size_t>(object)]) return;
  backend_.allocate(object, fill);
  present_[static_cast<std::size_t>(object)] = true;
  live_bytes_ += plan_.object(object).bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, live_bytes_);
}

void Executor::drop(int object) {
  if (!present_[static_cast<std::size_t>(object)]) return;
  backend_.release(object);
  present_[static_cast<std::size_t>(object)] = false;
  live_bytes_ -= plan_.object(object).bytes;
}

void Executor::prepare() {
  for (int obj = 0; obj < static_cast<int>(plan_.objects.size()); ++obj) {
    const DataObject& o = plan_.object(obj);
    if (o.input && o.home_rank == rank_) ensure(obj, ObjectFill::input);
  }
}

bool Executor::can_issue(int op, std::span<const int> same_group, std::vector<int>& pending) const {
  for (int p : deps_.prerequisites(op)) {
    if (done_[static_cast<std::size_t>(p)]) continue;
    if (std::find(same_group.begin(), same_group.end(), p) != same_group.end()) continue;
    if (issued_[static_cast<std::size_t>(p)] &&
        ordered(backend_, deps_.stream(p), deps_.stream(op))) {
      pending.push_back(p);
      continue;
    }
    return false;
  }
  return true;
}

void Executor::maybe_inject(int op) const {
  if (options_.fail.rank != rank_ || options_.fail.op != op) return;
  const std::string what = plan_.describe(OpId{rank_, op});
  if (options_.fail.mode == FailureInjection::Mode::hang) {
    fmt::print(stderr, "tilesim run: rank {} hangs at {} (injected by TILESIM_FAIL_MODE=hang)\n",
               rank_, what);
    std::fflush(stderr);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  throw RankFailure(rank_, op, "injected failure (TILESIM_FAIL_RANK/TILESIM_FAIL_OP)");
}

void Executor::issue_compute(int op, std::span<const int> pending) {
  const RankProgram& program = plan_.programs[static_cast<std::size_t>(rank_)];
  const Op& o = program.op(op);
  maybe_inject(op);
  if (o.kind == OpKind::compute) {
    const ComputeTask task = compute_task(plan_, rank_, op);
    for (int w : program.writes(op)) ensure(w, ObjectFill::accumulator);
    stats_.compute_flops += plan_.compute_flops({rank_, op});
    backend_.launch_compute(task, pending);
  } else {
    const MergeTask task = merge_task(plan_, rank_, op);
    for (int w : program.writes(op)) ensure(w, ObjectFill::accumulator);
    backend_.launch_merge(task, pending);
  }
  issued_[static_cast<std::size_t>(op)] = true;
}

void Executor::post_group(const CommGroup& group, std::span<const int> pending) {
  const RankProgram& program = plan_.programs[static_cast<std::size_t>(rank_)];
  std::vector<CommTask> tasks;
  for (int op : group.ops) {
    maybe_inject(op);
    const Op& o = program.op(op);
    const int object = o.kind == OpKind::send ? program.reads(op)[0] : program.writes(op)[0];
    if (o.kind == OpKind::recv) {
      ensure(object, ObjectFill::none);
      stats_.bytes_received += plan_.object(object).bytes;
    } else {
      stats_.bytes_sent += plan_.object(object).bytes;
    }
    tasks.push_back(CommTask{op, o.kind, object, o.peer, tags_[static_cast<std::size_t>(op)]});
  }
  backend_.post_group(tasks, pending);
  for (int op : group.ops) issued_[static_cast<std::size_t>(op)] = true;
}

void Executor::stalled() const {
  const RankProgram& program = plan_.programs[static_cast<std::size_t>(rank_)];
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (done_[static_cast<std::size_t>(i)]) continue;
    throw RankFailure(
        rank_, i,
        fmt::format("no progress for {} ms ({}; --timeout)", options_.stall_timeout.count(),
                    issued_[static_cast<std::size_t>(i)] ? "issued, waiting for it to finish"
                                                         : "waiting for its prerequisites"));
  }
  throw RankFailure(rank_, -1, "no progress (--timeout)");
}

RankRun Executor::run() {
  using Clock = std::chrono::steady_clock;
  const std::size_t n = deps_.size();
  std::size_t finished_count = 0;
  std::size_t next_compute = 0;
  std::size_t next_group = 0;
  std::vector<int> pending_frees = deps_.free_ops();
  std::vector<int> pending;
  std::vector<int> finished;
  auto finish = [&](int op) {
    if (!done_[static_cast<std::size_t>(op)]) {
      done_[static_cast<std::size_t>(op)] = true;
      issued_[static_cast<std::size_t>(op)] = true;
      ++finished_count;
    }
  };
  backend_.start_clock();
  auto last_progress = Clock::now();
  while (finished_count < n) {
    bool progress = false;
    const auto& computes = deps_.compute_ops();
    while (next_compute < computes.size()) {
      pending.clear();
      if (!can_issue(computes[next_compute], {}, pending)) break;
      issue_compute(computes[next_compute++], pending);
      progress = true;
    }
    const auto& groups = deps_.groups();
    while (next_group < groups.size()) {
      const CommGroup& group = groups[next_group];
      pending.clear();
      const bool ready = std::all_of(group.ops.begin(), group.ops.end(),
                                     [&](int op) { return can_issue(op, group.ops, pending); });
      if (!ready) break;
      std::sort(pending.begin(), pending.end());
      pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
      post_group(group, pending);
      ++next_group;
      progress = true;
    }
    for (auto it = pending_frees.begin(); it != pending_frees.end();) {
      const auto pre = deps_.prerequisites(*it);
      if (!std::all_of(pre.begin(), pre.end(),
                       [&](int p) { return done_[static_cast<std::size_t>(p)]; })) {
        ++it;
        continue;
      }
      maybe_inject(*it);
      for (int object : plan_.programs[static_cast<std::size_t>(rank_)].writes(*it)) drop(object);
      finish(*it);
      it = pending_frees.erase(it);
      progress = true;
    }
    finished.clear();
    backend_.poll(finished);
    for (int op : finished) finish(op);
    if (progress || !finished.empty()) {
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress > options_.stall_timeout) {
      stalled();
    } else {
      backend_.idle();
    }
  }
  stats_.timings = backend_.timings();
  return stats_;
}

}  // namespace tilesim::runtime
