// A failure of one rank while it executes its program: the op it happened at and why.
// The run verb prints it (naming rank and op) and aborts the whole job.
#pragma once

#include <stdexcept>
#include <string>

namespace tilesim::runtime {

class RankFailure : public std::runtime_error {
 public:
  RankFailure(int rank, int op, const std::string& message)
      : std::runtime_error(message), rank_(rank), op_(op) {}
  int rank() const { return rank_; }
  int op() const { return op_; }  // -1 when not tied to one op

 private:
  int rank_;
  int op_;
};

}  // namespace tilesim::runtime
