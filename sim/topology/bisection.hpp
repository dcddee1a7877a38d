// Maximum flow between two sets of GPUs, and the GPU bisection bandwidth.
//
// Model: every directed link is an edge whose capacity is its bandwidth per
// direction (rounded to whole bytes/s); a super-source feeds every GPU of the
// first set and every GPU of the second set drains into a super-sink, both with
// unbounded capacity. The value is Boost's push-relabel maximum flow.
// Bisection bandwidth = max flow from GPUs [0, G/2) to GPUs [G/2, G) by index
// (node-major, so the first half of the nodes against the second half), in one
// direction; 0 for fewer than two GPUs.
#pragma once

#include <vector>

#include "sim/topology/topology.hpp"

namespace tilesim {

double max_flow_bytes_per_s(const Topology& topology, const std::vector<int>& from_gpus,
                            const std::vector<int>& to_gpus);

double bisection_bytes_per_s(const Topology& topology);

}  // namespace tilesim
