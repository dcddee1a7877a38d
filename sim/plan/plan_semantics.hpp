// The plan semantics of plan.hpp, derived once per rank. The tracker (and through it the
// validator's dry run and the simulator) and the runtime executor all read this derivation,
// so what the simulator models and what the runtime enforces cannot drift apart.
//
// For op i of a rank's program:
//   prerequisites(i) = after(i)
//                    + the last writer of every object i reads          (read-after-write)
//                    + the last writer and every reader since then
//                      of every object i writes                          (WAW, WAR)
//     where free counts as a write; sorted ascending, unique, all < i.
//   stream(i): compute and merge run on the compute stream in program order; send and recv
//     on the comm stream in comm groups; free on the host, done as soon as it is ready.
//   comm groups: maximal runs of consecutive comm ops (other ops may sit between them) with
//     the same Op::comm_group; group g is posted when group g-1 has completed and every op of
//     g is ready. A group id that forms two runs is a PlanError.
//   memory: inputs are live on their home rank from the start; an op other than send
//     allocates each object it writes that is not live at that point of the program (a recv
//     when its group is posted, a compute or merge when it starts); free releases its object
//     when live. Writes and frees of one object are ordered by the hazards, so the program
//     order decides which op allocates or releases what.
// Form: CSR arrays per rank (4 bytes per prerequisite and per allocation, about 17 per op), no
// per-op containers: plans reach tens of millions of ops. Option fold_compute_stream gives
// the tracker's smaller form: each compute-stream op also waits for the previous one, and of
// an op's compute-stream prerequisites only the latest is kept (the stream completes in
// order, so that op's completion implies the earlier ones').
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/plan/op_derivation.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

// A plan that cannot be executed (unmatched send, object mismatch, 'after' naming a later op,
// a comm group that is not consecutive...).
class PlanError : public std::runtime_error {
 public:
  PlanError(OpId op, const std::string& message) : std::runtime_error(message), op_(op) {}
  OpId op() const { return op_; }

 private:
  OpId op_;
};

enum class Stream : std::uint8_t { compute, comm, host };  // host: free ops

constexpr Stream stream_of(OpKind kind) {
  switch (kind) {
    case OpKind::compute:
    case OpKind::merge:
      return Stream::compute;
    case OpKind::send:
    case OpKind::recv:
      return Stream::comm;
    case OpKind::free:
      break;
  }
  return Stream::host;
}

struct SemanticsOptions {
  bool fold_compute_stream = false;  // see the header comment
};

// One rank's derived semantics. Op and group indices are the rank's.
class RankSemantics {
 public:
  std::size_t size() const { return streams_.size(); }
  std::span<const std::int32_t> prerequisites(int op) const {
    return range(prereqs_, prereq_begin_, op);
  }
  Stream stream(int op) const { return streams_[static_cast<std::size_t>(op)]; }
  // Objects op allocates (for a free: releases), in the order it writes them.
  std::span<const std::int32_t> allocations(int op) const {
    return range(allocations_, allocation_begin_, op);
  }

  int group_count() const { return static_cast<int>(group_ids_.size()); }
  // Ops of group g, in program order.
  std::span<const std::int32_t> group_ops(int g) const { return range(comm_ops_, group_begin_, g); }
  int group_id(int g) const { return group_ids_[static_cast<std::size_t>(g)]; }   // Op::comm_group
  int group_of(int op) const { return group_of_[static_cast<std::size_t>(op)]; }  // -1: not comm

  // Compute-stream ops and free ops in program order.
  const std::vector<std::int32_t>& compute_ops() const { return compute_ops_; }
  const std::vector<std::int32_t>& free_ops() const { return free_ops_; }

 private:
  friend class SemanticsDeriver;
  static std::span<const std::int32_t> range(const std::vector<std::int32_t>& items,
                                             const std::vector<std::uint32_t>& begin, int k) {
    const auto i = static_cast<std::size_t>(k);
    return {items.data() + begin[i], begin[i + 1] - begin[i]};
  }
  void clear();

  std::vector<std::uint32_t> prereq_begin_;  // size() + 1
  std::vector<std::int32_t> prereqs_;
  std::vector<std::uint32_t> allocation_begin_;  // size() + 1
  std::vector<std::int32_t> allocations_;
  std::vector<Stream> streams_;
  std::vector<std::int32_t> group_of_;
  std::vector<std::uint32_t> group_begin_;  // group_count() + 1
  std::vector<std::int32_t> comm_ops_;
  std::vector<std::int32_t> group_ids_;
  std::vector<std::int32_t> compute_ops_;
  std::vector<std::int32_t> free_ops_;
};

// Derives RankSemantics for the ranks of one plan, reusing its per-object scratch across
// ranks (a plan has millions of objects; each rank touches few of them).
class SemanticsDeriver {
 public:
  explicit SemanticsDeriver(const Plan& plan, SemanticsOptions options = {});

  // Throws PlanError for an 'after' that names a later op and for a comm group that is not
  // consecutive. `out` keeps its capacity, so deriving rank after rank into one object is cheap.
  void derive(int rank, RankSemantics& out);
  RankSemantics derive(int rank);

 private:
  struct Hazard : ObjectHazard {
    bool touched = false;
  };
  Hazard& hazard(int rank, int object);

  const Plan* plan_;
  SemanticsOptions options_;
  std::vector<Hazard> hazards_;
  std::vector<std::uint8_t> live_;  // per object, while deriving one rank
  std::vector<std::int32_t> touched_;
  std::vector<std::int32_t> preds_;
  std::vector<ObjectHazard*> read_hazards_, write_hazards_;  // the op's, while deriving it
  std::vector<std::pair<int, int>> group_runs_;              // (group id, first op) per run
};

}  // namespace tilesim
