// The send/recv pairs of a plan under its matching rule (plan.hpp): the k-th send a->b pairs
// with the k-th recv b<-a. For tools that read a finished timeline (measured results, run
// fits); the tracker matches the same way while it executes.
#pragma once

#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim {

struct SendRecvPair {
  OpId send;
  OpId recv;
};

// In recv order (rank, then program order). Throws std::invalid_argument naming the first
// recv that has no send; sends without a recv are left out.
std::vector<SendRecvPair> send_recv_pairs(const Plan& plan);

}  // namespace tilesim
