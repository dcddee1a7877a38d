// The plan IR: what both the simulator and the runtime execute.
//
// A plan holds, for P ranks, the token chunks, the data objects and one ordered
// program per rank. Data objects are global ids; a copy of object X can be on
// several ranks (a KV chunk travelling round a ring). Ops read and write objects:
//   compute(q chunk x kv chunk, pass)  reads Q/KV (and dO, D... for backward),
//                                      accumulates into its writes (O+LSE, dQ, dKV)
//   send(X, to) reads X; recv(X, from) writes X; merge reads partials and writes
//   the target accumulator; free(X, ...) drops this rank's copies of X, ...
// Execution semantics (derived once, in plan_semantics.hpp, for the validator,
// the simulator and the runtime):
//   * compute and merge run in program order on the rank's compute stream;
//   * send and recv run on the rank's comm stream in groups: consecutive comm ops
//     with the same `group` are posted together (one NCCL group); a group is
//     posted when the previous group has completed and all its ops are ready;
//     the k-th send a->b matches the k-th recv b<-a;
//   * an op is ready when its `after` ops are done and every earlier op of the
//     rank that touches one of its objects, with either side writing, is done
//     (read-after-write, write-after-read, write-after-write); free counts as a
//     write; free completes as soon as it is ready.
// Op ids are (rank, index in that rank's program) and appear in every trace.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/plan/attention_shape.hpp"
#include "sim/plan/token_layout.hpp"

namespace tilesim {

enum class Tensor : std::uint8_t { q, kv, o, lse, d_o, delta, dq, dkv };
enum class OpKind : std::uint8_t { compute, send, recv, merge, free };
enum class Pass : std::uint8_t { fwd, bwd };

std::string_view to_string(Tensor tensor);
std::string_view to_string(OpKind kind);
std::string_view to_string(Pass pass);

// True for tensors that compute ops accumulate into (their contributions are
// tracked by the validator until they reach their owner).
constexpr bool is_accumulator(Tensor tensor) {
  return tensor == Tensor::o || tensor == Tensor::lse || tensor == Tensor::dq ||
         tensor == Tensor::dkv;
}
// Accumulators reduce over kv chunks (o, lse, dq) or over q chunks (dkv).
constexpr bool reduces_over_kv(Tensor tensor) { return tensor != Tensor::dkv; }

// A chunk is a set of token blocks for one head group. Schedules that split
// heads (Ulysses, USP) set Plan::head_groups = g > 1: the chunk's objects then
// hold heads/g query heads and kv_heads/g kv heads, and a compute between two
// chunks of head group h does 1/g of the FLOPs of the same token pairs over all
// heads. Every other schedule has one head group holding all heads.
struct Chunk {
  std::vector<int> blocks;  // block indices of the token layout
  int owner = 0;            // rank that owns this chunk's inputs and outputs
  std::int64_t tokens = 0;
  int head_group = 0;  // 0 .. Plan::head_groups-1
};

struct DataObject {
  Tensor tensor = Tensor::q;
  int chunk = 0;      // token chunk it belongs to
  int home_rank = 0;  // rank holding it at the start (inputs) or creating it
  double bytes = 0.0;
  bool input = false;   // present on home_rank before the program starts
  bool output = false;  // must end complete on home_rank (final O, LSE, dQ, dKV)
  std::string name;     // e.g. "KV[3]", "O[2]@5"
};

struct OpId {
  int rank = 0;
  int index = 0;
  friend bool operator==(OpId, OpId) = default;
};

// One (q chunk, kv chunk) block pair of a compute op.
struct ChunkPair {
  std::int32_t q_chunk = -1;
  std::int32_t kv_chunk = -1;
  friend bool operator==(ChunkPair, ChunkPair) = default;
};

struct Op {
  OpKind kind = OpKind::compute;
  Pass pass = Pass::fwd;
  std::uint16_t pair_count = 0;  // compute: block pairs (RankProgram::pairs)
  std::int32_t peer = -1;        // send: destination, recv: source
  std::int32_t comm_group = -1;  // send/recv: comm group
  std::uint32_t pairs_begin = 0;
  std::uint32_t refs_begin = 0;
  std::uint16_t read_count = 0;
  std::uint16_t write_count = 0;
  std::uint16_t after_count = 0;
};

// One rank's program. Object and op references live in one pool per rank to
// keep a plan of millions of ops compact. A program generated piece by piece for
// a windowed simulation (sim/plan/windowed_tracker.hpp) drops the ops it has run:
// indices stay those of the whole program, size() is one past the last op added,
// and only ops at or after first_index() may be read.
class RankProgram {
 public:
  int add(Op op, std::span<const int> reads, std::span<const int> writes,
          std::span<const int> after);
  // A compute op over `pairs` (at least one).
  int add_compute(Op op, std::span<const ChunkPair> pairs, std::span<const int> reads,
                  std::span<const int> writes, std::span<const int> after);

  std::size_t size() const { return first_ + ops_.size(); }
  const Op& op(int index) const { return ops_[local(index)]; }
  Op& mutable_op(int index) { return ops_[local(index)]; }
  int first_index() const { return static_cast<int>(first_); }
  // Drops the ops before `index` (and their references), keeping later indices; an index at
  // or before first_index() drops nothing.
  void discard_before(int index);
  // Inline: the tracker and validator call these for every op.
  std::span<const int> reads(int index) const {
    const Op& o = op(index);
    return {refs_.data() + o.refs_begin, o.read_count};
  }
  std::span<const int> writes(int index) const {
    const Op& o = op(index);
    return {refs_.data() + o.refs_begin + o.read_count, o.write_count};
  }
  std::span<const int> after(int index) const {
    const Op& o = op(index);
    return {refs_.data() + o.refs_begin + o.read_count + o.write_count, o.after_count};
  }
  std::span<const ChunkPair> pairs(int index) const {
    const Op& o = op(index);
    return {pairs_.data() + o.pairs_begin, o.pair_count};
  }
  // Tests corrupt plans through this.
  std::span<ChunkPair> mutable_pairs(int index) {
    const Op& o = op(index);
    return {pairs_.data() + o.pairs_begin, o.pair_count};
  }
  // Replaces an op's references (used by tests that corrupt plans).
  void set_refs(int index, std::span<const int> reads, std::span<const int> writes,
                std::span<const int> after);
  void remove(int index);                              // later ops' `after` indices are shifted
  const std::vector<Op>& ops() const { return ops_; }  // from first_index() on

 private:
  std::size_t local(int index) const { return static_cast<std::size_t>(index) - first_; }

  std::size_t first_ = 0;  // index of ops_[0]; 0 unless discard_before was called
  std::vector<Op> ops_;
  std::vector<std::int32_t> refs_;
  std::vector<ChunkPair> pairs_;
};

// How the simulator costs a merge op that folds a call's block O and LSE into the running
// accumulators (sim/plan/output_correction.hpp, merge_cost.hpp): one fused pass over its
// bytes, or the op-by-op PyTorch form of the same update (several elementwise kernels).
enum class MergeForm : std::uint8_t { one_pass, eager };

// How the simulator costs the plan's transfers and merges (the semantics above do not change):
//   p2p        point-to-point sends (NCCL send/recv, one flow each) and merges as kernels of
//              their own;
//   nccl_ring  every transfer is a step of an NCCL ring collective (all-gather, reduce-scatter)
//              among the `collective_ranks` consecutive ranks of its communicator, and runs on
//              one channel per GPU the communicator has on the sender's node: bytes / lanes
//              over each, a cross-node step entering the receiver's node by each lane's NIC
//              (NCCL's rings enter a node by different NICs); every merge is the collective's
//              reduction, done inside its kernel (bytes, no launch).
enum class CommStyle : std::uint8_t { p2p, nccl_ring };

struct Plan {
  std::string schedule;  // e.g. "ring", "mesh"
  int tile_a = 1;        // Q-group size (mesh); ring is 1 x P
  int tile_b = 1;        // KV-group size
  int ranks = 0;
  int head_groups = 1;  // heads are split in this many equal groups (see Chunk)
  AttentionShape shape;
  TokenLayout layout;
  std::vector<Chunk> chunks;
  std::vector<DataObject> objects;
  std::vector<RankProgram> programs;
  std::vector<int> placement;  // rank -> GPU index; empty = identity
  MergeForm merge_form = MergeForm::one_pass;
  CommStyle comm_style = CommStyle::p2p;
  int collective_ranks = 0;  // nccl_ring: ranks per communicator (0: all the plan's)

  std::size_t op_count() const;
  int add_object(DataObject object);
  const DataObject& object(int id) const { return objects[static_cast<std::size_t>(id)]; }
  // Pairs of (query, key) tokens that attend in a q chunk x kv chunk block.
  double unmasked_pairs(int q_chunk, int kv_chunk) const;
  // Forward or backward FLOPs of rank `rank`'s op `index` (0 unless compute):
  // per token-pair FLOPs x unmasked token pairs of all its block pairs,
  // divided by head_groups (a chunk holds 1/head_groups of the heads).
  double compute_flops(OpId id) const;
  // The same for a compute of `pass` over `pairs`.
  double compute_flops(Pass pass, std::span<const ChunkPair> pairs) const;
  std::string describe(OpId id) const;  // "rank 2 op 7: compute Q[2] x KV[1] fwd"
};

}  // namespace tilesim
