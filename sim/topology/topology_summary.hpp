// Human summary and Graphviz view of a topology, for `tilesim topo FILE`.
//
// Counts: links_per_class counts cables (one per Topology::connect call, i.e.
// one per pair of directed links). Injection bandwidths are per GPU, per
// direction, averaged over the GPUs of node 0: intra-node = sum of the GPU's
// links to devices of its own node other than NICs (NVLink, or PCIe on PCIe
// machines); network = bandwidth of all links leaving node 0 (NIC -> leaf)
// divided by the GPUs per node (0 without a fabric). Bisection: see
// bisection.hpp (first half of the GPUs by index against the second half).
#pragma once

#include <map>
#include <string>

#include "sim/topology/topology.hpp"

namespace tilesim {

struct TopologySummary {
  std::string name;
  std::string gpu_model;
  int gpus = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  int devices = 0;
  int cables = 0;                               // = directed links / 2
  std::map<std::string, int> devices_per_kind;  // "gpu", "nic", "ib_switch", ...
  std::map<std::string, int> links_per_class;   // cables per class: "nvlink", "ib", ...
  double intra_node_injection_bytes_per_s_per_gpu = 0.0;
  double network_injection_bytes_per_s_per_gpu = 0.0;
  double bisection_bytes_per_s = 0.0;
};

TopologySummary summarize(const Topology& topology);
std::string format_summary(const TopologySummary& summary);
// Undirected Graphviz graph: one vertex per device (GPUs as boxes, nodes as
// clusters), one edge per cable labelled with class and bandwidth.
std::string to_dot(const Topology& topology);

}  // namespace tilesim
