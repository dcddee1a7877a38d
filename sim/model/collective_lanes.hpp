// The lanes of NCCL's ring collectives (plan.hpp CommStyle::nccl_ring).
//
// NCCL runs a ring collective over several channels, each its own ring through the nodes;
// across nodes the channels leave by different GPUs' NICs. A GPU's lanes are the GPUs its
// communicator has on its node, in rank order. A collective step from s to d on another node
// runs as n = min(lanes of s's node, lanes of d's node) parts of bytes / n, part i on
// s -> L_i -> L'_i -> d (L_i, L'_i the i-th lanes of the two nodes; a leg from a GPU to
// itself is empty): flow_transfer_model.hpp. Inside one node the parts follow s -> d.
#pragma once

#include <vector>

#include "sim/topology/topology.hpp"

namespace tilesim {

// Per GPU of `topology`: the GPUs of its node that its communicator (every
// `communicator_ranks` consecutive ranks of `placement`; 0 = all of them) runs on, in rank
// order; empty for a GPU that runs no rank.
std::vector<std::vector<int>> collective_lanes(const std::vector<int>& placement,
                                               int communicator_ranks, const Topology& topology);

// The route of part `lane` of a cross-node collective step src -> src_lane -> dst_lane -> dst:
// the router's legs joined, their latencies added.
Route collective_lane_route(Router& router, int src_gpu, int src_lane_gpu, int dst_lane_gpu,
                            int dst_gpu);

}  // namespace tilesim
