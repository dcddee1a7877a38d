// What the executor drives on one rank: object memory, a compute stream, a comm stream.
//
// Model: the backend owns one copy per object present on this rank. Compute and merge ops run
// in issue order on the compute stream; comm groups run in issue order on the comm stream (one
// group = the sends and receives posted together). Every issue call names the op's
// prerequisites that are issued but not finished (`pending`): the backend must make the new op
// wait for them. `orders_across_streams()` says whether it can (CUDA events can; CPU threads
// and MPI requests cannot, so the executor then waits for those prerequisites to finish
// before issuing). Ops of the same stream are always ordered by issue order.
//
// Failures are thrown as RankFailure (runtime/rank_failure.hpp) naming the op.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

// How a newly allocated object starts.
enum class ObjectFill {
  input,        // the seeded input data (Q, KV, dO)
  accumulator,  // an empty accumulator: O = 0, LSE = -inf, dQ/dKV = 0
  none,         // contents arrive later (a receive)
};

// One chunk pair of a compute op: every (q block, kv block) pair of its two chunks that the
// mask does not skip.
//   fwd: reads q, kv; accumulates the block's O/LSE partial into o, lse (online merge).
//   bwd: reads q, kv, d_o and the final merged o, lse of the q chunk; adds into dq, dkv.
struct ComputePair {
  int q_chunk = -1;
  int kv_chunk = -1;
  int q = -1, kv = -1;    // inputs
  int o = -1, lse = -1;   // fwd: accumulators (written); bwd: final O and LSE (read)
  int d_o = -1;           // bwd: gradient of O (read)
  int dq = -1, dkv = -1;  // bwd: accumulators (written)
};

// A compute op: its chunk pairs, run in order as one launch.
struct ComputeTask {
  int op = -1;
  Pass pass = Pass::fwd;
  std::vector<ComputePair> pairs;
};

struct PartialPair {
  int o = -1;
  int lse = -1;
};

// An O/LSE softmax merge: partials into target (its current contents take part).
struct SoftmaxMerge {
  std::vector<PartialPair> partials;  // merged in this order
  PartialPair target;
};

// A dQ or dKV merge: an elementwise sum of addends into target (its contents take part).
struct SumMerge {
  std::vector<int> addends;  // added in this order
  int target = -1;
};

// One merge op: one task (one timed launch) over every accumulator it writes, as the output
// correction after a fused kernel call folds all of that call's block partials.
struct MergeTask {
  int op = -1;
  std::vector<SoftmaxMerge> softmax;
  std::vector<SumMerge> sums;
};

struct CommTask {
  int op = -1;
  OpKind kind = OpKind::send;
  int object = -1;
  int peer = -1;
  int tag = 0;  // the k-th send a->b and the k-th recv b<-a carry tag k
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string name() const = 0;
  virtual bool orders_across_streams() const = 0;

  // Starts the clock all timings are relative to (called once, after a barrier).
  virtual void start_clock() = 0;

  virtual void allocate(int object, ObjectFill fill) = 0;
  virtual void release(int object) = 0;

  virtual void launch_compute(const ComputeTask& task, std::span<const int> pending) = 0;
  virtual void launch_merge(const MergeTask& task, std::span<const int> pending) = 0;
  virtual void post_group(std::span<const CommTask> tasks, std::span<const int> pending) = 0;

  // Appends the ops that finished since the last call. Throws RankFailure.
  virtual void poll(std::vector<int>& finished) = 0;
  // Called when nothing progressed: wait briefly (never longer than about a millisecond).
  virtual void idle() = 0;

  // Start/end of every finished op, relative to start_clock (valid once all ops finished).
  virtual std::vector<OpTiming> timings() = 0;
  // The watchdog found no progress: end pending communication so nothing blocks the abort
  // (the cuda backend aborts its NCCL communicator; MPI_Abort ends the rest).
  virtual void abort_communication() {}
  // A host fp32 copy of an object present on this rank (after everything finished).
  virtual std::vector<float> read_object(int object) = 0;
};

}  // namespace tilesim::runtime
