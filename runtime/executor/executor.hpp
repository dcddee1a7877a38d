// Walks one rank's program under the plan semantics (sim/plan/plan.hpp) and drives a Backend.
//
// Issue rules (runtime/executor/issue_order.hpp): compute and merge ops are issued in program
// order; comm groups are posted in program order, a whole group at once; free ops run on the
// host. An op is issued when each op it waits for has finished, or has been issued on a stream
// the backend orders after (Backend::orders_across_streams). Objects are allocated as the plan
// semantics decide (sim/plan/plan_semantics.hpp): inputs at home before the program starts, a
// receive's object when its group is posted, a compute's or merge's accumulators (empty) when
// it is issued; free releases. Live bytes are counted with
// the plan's object sizes, so peak memory is comparable with the simulator's.
// Compute ops of both passes are handed over as tasks (runtime/op_tasks.hpp): forward reads
// Q, KV and accumulates O, LSE; backward reads Q, KV, dO, O, LSE and accumulates dQ, dKV.
//
// Watchdog: if nothing is issued or finishes for `stall_timeout`, the rank fails naming the
// first unfinished op. Before the clock starts, every input is checked finite: a NaN or inf
// fails the rank naming the input and the first op that reads it.
// Failure injection (a test hook, TILESIM_FAIL_*): the rank `fail.rank`, at op `fail.op`,
//   error    throws (the job aborts naming rank and op);
//   hang     sleeps forever (the others' watchdogs fire);
//   kill     raises SIGKILL (mpirun ends the job; the message before it names the op);
//   exit     exits 0 without MPI_Finalize (a peer that leaves early);
//   no_recv  never posts that receive (its own watchdog names the op);
//   nan      (fail.op ignored) its first input holds a NaN (runtime/mpi/run_command.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/executor/backend.hpp"
#include "runtime/executor/issue_order.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct FailureInjection {
  enum class Mode { error, hang, kill, exit, no_recv, nan };
  int rank = -1;  // -1: no injection
  int op = -1;
  Mode mode = Mode::error;
};

struct ExecutorOptions {
  std::chrono::milliseconds stall_timeout{60'000};
  FailureInjection fail;
};

struct RankRun {
  std::vector<OpTiming> timings;  // [op index], relative to the backend's clock start
  double peak_bytes = 0.0;
  double compute_flops = 0.0;
  double bytes_sent = 0.0;
  double bytes_received = 0.0;
};

class Executor {
 public:
  Executor(const Plan& plan, int rank, Backend& backend, ExecutorOptions options);

  // Allocates the rank's inputs (before the clock starts).
  void prepare();
  // Starts the backend clock and runs the program to the end. Throws RankFailure.
  RankRun run();

 private:
  bool can_issue(int op, std::vector<int>& pending);
  void issue_compute(int op, std::span<const int> pending);
  void post_group(std::span<const std::int32_t> group, std::span<const int> pending);
  void ensure(int object, ObjectFill fill);
  void drop(int object);
  void maybe_inject(int op) const;
  void check_finite_input(int object);
  [[noreturn]] void stalled() const;

  const Plan& plan_;
  int rank_;
  Backend& backend_;
  ExecutorOptions options_;
  IssueOrder order_;
  std::vector<int> waits_;  // scratch for can_issue
  std::vector<int> tags_;   // comm op -> tag
  std::vector<bool> issued_;
  std::vector<bool> done_;
  std::vector<bool> present_;
  double live_bytes_ = 0.0;
  RankRun stats_;
};

}  // namespace tilesim::runtime
