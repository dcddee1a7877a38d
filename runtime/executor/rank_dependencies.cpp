#include "runtime/executor/rank_dependencies.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace tilesim::runtime {

Stream stream_of(OpKind kind) {
  switch (kind) {
    case OpKind::compute:
    case OpKind::merge:
      return Stream::compute;
    case OpKind::send:
    case OpKind::recv:
      return Stream::comm;
    case OpKind::free:
      return Stream::host;
  }
  return Stream::host;
}

RankDependencies::RankDependencies(const Plan& plan, int rank) {
  const RankProgram& program = plan.programs.at(static_cast<std::size_t>(rank));
  const int n = static_cast<int>(program.size());
  prereqs_.resize(static_cast<std::size_t>(n));
  streams_.resize(static_cast<std::size_t>(n));
  struct Access {
    int last_writer = -1;
    std::vector<int> readers;  // since the last write
  };
  std::unordered_map<int, Access> access;
  for (int i = 0; i < n; ++i) {
    const Op& op = program.op(i);
    auto& pre = prereqs_[static_cast<std::size_t>(i)];
    streams_[static_cast<std::size_t>(i)] = stream_of(op.kind);
    for (int a : program.after(i)) pre.push_back(a);
    for (int obj : program.reads(i)) {
      const Access& acc = access[obj];
      if (acc.last_writer >= 0) pre.push_back(acc.last_writer);
    }
    for (int obj : program.writes(i)) {
      const Access& acc = access[obj];
      if (acc.last_writer >= 0) pre.push_back(acc.last_writer);
      pre.insert(pre.end(), acc.readers.begin(), acc.readers.end());
    }
    for (int obj : program.reads(i)) access[obj].readers.push_back(i);
    for (int obj : program.writes(i)) {
      Access& acc = access[obj];
      acc.last_writer = i;
      acc.readers.clear();
    }
    switch (stream_of(op.kind)) {
      case Stream::compute:
        compute_ops_.push_back(i);
        break;
      case Stream::host:
        free_ops_.push_back(i);
        break;
      case Stream::comm:
        // A group is a run of consecutive comm ops (compute ops may sit between them).
        if (groups_.empty() || groups_.back().group != op.comm_group) {
          for (const CommGroup& g : groups_) {
            if (g.group == op.comm_group) {
              throw std::invalid_argument(plan.describe(OpId{rank, i}) +
                                          ": comm group is not consecutive in the program");
            }
          }
          groups_.push_back(CommGroup{op.comm_group, {}});
        }
        groups_.back().ops.push_back(i);
        if (groups_.size() >= 2) {
          const CommGroup& prev = groups_[groups_.size() - 2];
          pre.insert(pre.end(), prev.ops.begin(), prev.ops.end());
        }
        break;
    }
    std::sort(pre.begin(), pre.end());
    pre.erase(std::unique(pre.begin(), pre.end()), pre.end());
    pre.erase(std::remove(pre.begin(), pre.end(), i), pre.end());
  }
}

std::span<const int> RankDependencies::prerequisites(int op) const {
  return prereqs_.at(static_cast<std::size_t>(op));
}

}  // namespace tilesim::runtime
