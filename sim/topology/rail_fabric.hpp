// Rail-optimised fat tree joining the nodes of a cluster: two tiers (leaf, spine) inside a
// pod, and a core tier joining the pods when the cluster has more than one.
//
// Model: the NICs of a node, in template order, are rails 0..R-1 (one NIC per GPU in
// DGX/HGX nodes). Rail r has ceil(nodes / nodes_per_leaf) leaf switches; leaf g of rail r
// ("leaf.r<r>.<g>") serves NIC r of nodes [g * nodes_per_leaf, (g + 1) * nodes_per_leaf),
// one port each. A pod is `pod_nodes` consecutive nodes (a whole number of leaf groups;
// absent = the whole cluster, one pod); every spine of a pod has one link to every leaf of
// that pod (all rails). A leaf's uplink bandwidth is its downlink bandwidth (nodes_per_leaf
// ports) divided by the oversubscription ratio, spread evenly over the pod's spines; spines
// default to ceil(nodes_per_leaf / oversubscription), one uplink port per spine.
// With more than one pod, spine s of every pod joins core plane s: the plane's K cores
// ("core.<s>.<k>") each have one link to spine s of every pod, of bandwidth = the spine's
// downlink bandwidth (pod leaves x leaf-spine bandwidth) / core_oversubscription / K; K
// defaults to the pod's leaf count / core_oversubscription (one uplink port per core),
// so 64-port switches give pods of 32 leaves and up to 64 pods (65,536 GPUs with 8 rails
// and 32 nodes per leaf). A one-pod cluster names its spines "spine.<s>" and has no core;
// a multi-pod one names them "spine.p<p>.<s>".
// Switch latency is charged per switch crossed: a NIC-leaf link carries half of it and
// every switch-switch link a full one (half of each switch), so nic-leaf-nic costs one
// switch latency, nic-leaf-spine-leaf-nic three and a route through a core five.
// Each pod's spines and each core plane are spread groups (Topology::add_spread_group):
// the Router picks spine n mod S and core ((n / S) R + k) mod K for GPU k of destination
// node n and R rails (d-mod-k, the rail included so that a pod's pod_nodes / S nodes behind
// one spine times its R rails cover the K cores of the plane).
#pragma once

#include <string>
#include <vector>

#include "sim/core/yaml_reader.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct RailFabricSpec {
  double port_bandwidth_bytes_per_s = 0.0;  // per direction, e.g. NDR 400Gb/s = 50e9
  int nodes_per_leaf = 0;
  double oversubscription = 1.0;  // leaf downlink : uplink bandwidth, >= 1
  int spines = 0;                 // per pod; 0 = ceil(nodes_per_leaf / oversubscription)
  Picoseconds switch_latency_ps = 0;
  LinkClass cls = LinkClass::ib;
  int pod_nodes = 0;                   // 0 = one pod of every node (no core tier)
  double core_oversubscription = 1.0;  // spine downlink : uplink bandwidth, >= 1
  int cores_per_plane = 0;             // 0 = pod leaves / core_oversubscription
  int switch_ports = 0;                // every switch's ports (radix); 0 = not checked

  int spine_count() const;
  double leaf_spine_bandwidth_bytes_per_s() const;
  int pod_count(int nodes) const;   // pods a cluster of `nodes` nodes needs
  int pod_leaves(int rails) const;  // leaves of one pod, all rails
  int core_count_per_plane(int rails) const;
  double spine_core_bandwidth_bytes_per_s(int rails) const;
  // With switch_ports: the ports a leaf (nodes_per_leaf down, one up to each spine) and a
  // spine (the pod's leaves down, one up to each core of its plane) need beyond it, "" when
  // they fit; and the most nodes the fabric joins: switch_ports pods (a core has one port per
  // pod) or, with one pod and no core, as many leaves per rail as a spine has ports.
  std::string port_shortfall(int rails) const;
  int max_nodes(int rails) const;  // INT_MAX without switch_ports
};

// Parses the `fabric:` mapping (keys: port_bandwidth, nodes_per_leaf, switch_latency,
// oversubscription?, spines?, class?, pod_nodes?, core_oversubscription?,
// cores_per_plane?, switch_ports?).
RailFabricSpec parse_rail_fabric(const YamlMap& fabric);

// Adds leaves and spines to `topology`; nics_per_node[n][r] is NIC r of node n.
// All nodes must have the same, non-zero number of NICs.
void add_rail_fabric(Topology& topology, const RailFabricSpec& spec,
                     const std::vector<std::vector<VertexId>>& nics_per_node);

}  // namespace tilesim
