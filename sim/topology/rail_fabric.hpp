// Rail-optimised two-tier fat tree joining the nodes of a cluster.
//
// Model: the NICs of a node, in template order, are rails 0..R-1 (one NIC per
// GPU in DGX/HGX nodes). Rail r has ceil(nodes / nodes_per_leaf) leaf switches;
// leaf g of rail r ("leaf.r<r>.<g>") serves NIC r of nodes
// [g * nodes_per_leaf, (g + 1) * nodes_per_leaf), one port each. Every spine
// ("spine.<s>") has one link to every leaf. A leaf's uplink bandwidth is its
// downlink bandwidth (nodes_per_leaf ports) divided by the oversubscription
// ratio, spread evenly over the spines; spines default to
// ceil(nodes_per_leaf / oversubscription), i.e. one uplink port per spine.
// Switch latency is charged per switch crossed: a NIC-leaf link carries half of
// it, a leaf-spine link a full one (half of each switch), so nic-leaf-nic costs
// one switch latency and nic-leaf-spine-leaf-nic three. The spines are marked
// on the topology (Topology::mark_spine, index s = spine.<s>) so that the Router
// spreads routes over them by destination node (d-mod-k, see Router).
#pragma once

#include <vector>

#include "sim/core/yaml_reader.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct RailFabricSpec {
  double port_bandwidth_bytes_per_s = 0.0;  // per direction, e.g. NDR 400Gb/s = 50e9
  int nodes_per_leaf = 0;
  double oversubscription = 1.0;  // leaf downlink : uplink bandwidth, >= 1
  int spines = 0;                 // 0 = ceil(nodes_per_leaf / oversubscription)
  Picoseconds switch_latency_ps = 0;
  LinkClass cls = LinkClass::ib;

  int spine_count() const;
  double leaf_spine_bandwidth_bytes_per_s() const;
};

// Parses the `fabric:` mapping (keys: port_bandwidth, nodes_per_leaf,
// switch_latency, oversubscription?, spines?, class?).
RailFabricSpec parse_rail_fabric(const YamlMap& fabric);

// Adds leaves and spines to `topology`; nics_per_node[n][r] is NIC r of node n.
// All nodes must have the same, non-zero number of NICs.
void add_rail_fabric(Topology& topology, const RailFabricSpec& spec,
                     const std::vector<std::vector<VertexId>>& nics_per_node);

}  // namespace tilesim
