// Loads a topology YAML file (schema: topologies/README.md).
//
// The file describes one node template (devices and links with local names),
// the number of nodes (`nodes: N | auto`, default 1) and an optional rail-
// optimised fat tree (`fabric:`). Node n's devices are named "n<n>.<local>";
// GPUs are numbered node-major in template order. Every bad input throws
// InputError naming the file, the 1-based line and the key path.
#pragma once

#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim {

// `gpus_wanted` sizes `nodes: auto` to ceil(gpus_wanted / gpus_per_node) nodes
// (1 node when gpus_wanted <= 0); it is ignored when `nodes` is a number (the
// caller checks that gpu_count() is large enough).
Topology load_topology(const std::string& path, int gpus_wanted);

}  // namespace tilesim
