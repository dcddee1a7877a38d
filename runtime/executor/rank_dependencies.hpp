// The dependency structure of one rank's program under the plan semantics (plan.hpp).
//
// Each op gets the list of earlier ops it must wait for: its `after` ops, every earlier op that
// touches one of its objects with either side writing (RAW, WAR, WAW; free writes; a merge also
// reads its targets), and for comm ops every op of the previous comm group (a group is posted
// when the previous one has completed). Stream order (compute/merge in program order, comm
// groups in order) is not listed: executors keep it by issuing in order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

enum class Stream : std::uint8_t { compute, comm, host };  // host: free ops

Stream stream_of(OpKind kind);

struct CommGroup {
  int group = -1;        // the plan's group id
  std::vector<int> ops;  // op indices, consecutive in the program
};

class RankDependencies {
 public:
  // Throws std::invalid_argument when a comm group is not consecutive in the program.
  RankDependencies(const Plan& plan, int rank);

  std::span<const int> prerequisites(int op) const;
  Stream stream(int op) const { return streams_[static_cast<std::size_t>(op)]; }
  const std::vector<int>& compute_ops() const { return compute_ops_; }  // program order
  const std::vector<CommGroup>& groups() const { return groups_; }      // program order
  const std::vector<int>& free_ops() const { return free_ops_; }
  std::size_t size() const { return streams_.size(); }

 private:
  std::vector<std::vector<int>> prereqs_;
  std::vector<Stream> streams_;
  std::vector<int> compute_ops_;
  std::vector<CommGroup> groups_;
  std::vector<int> free_ops_;
};

}  // namespace tilesim::runtime
