// Hand-built topologies and cost profiles whose timings can be computed by hand.
#pragma once

#include <fmt/format.h>

#include "sim/model/calibration_profile.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim::testing {

// P GPUs, each joined to one switch by a link of `bytes_per_s` per direction
// and `latency_ps`, so GPU-to-GPU routes are 2 links.
inline Topology star_topology(int gpus, double bytes_per_s, Picoseconds latency_ps = 0) {
  Topology t;
  t.name = "star";
  t.gpu_model = "test";
  t.gpus_per_node = gpus;
  t.node_count = 1;
  const VertexId sw = t.add_device({"switch", DeviceKind::nvswitch, 0, -1});
  for (int g = 0; g < gpus; ++g) {
    const VertexId v = t.add_device({fmt::format("gpu{}", g), DeviceKind::gpu, 0, -1});
    t.connect(v, sw, bytes_per_s, latency_ps, LinkClass::nvlink);
  }
  return t;
}

// Two nodes of two GPUs: in each node the GPUs on an NVSwitch (`nvlink_bytes_per_s`), each GPU
// on its own NIC (PCIe at `nvlink_bytes_per_s` too), the four NICs on one InfiniBand switch at
// `ib_bytes_per_s`; no latency. GPUs 0, 1 on node 0, 2, 3 on node 1.
inline Topology two_node_rail_topology(double nvlink_bytes_per_s, double ib_bytes_per_s) {
  Topology t;
  t.name = "two-nodes";
  t.gpu_model = "test";
  t.gpus_per_node = 2;
  t.node_count = 2;
  const VertexId fabric = t.add_device({"ib", DeviceKind::ib_switch, -1, -1});
  for (int n = 0; n < 2; ++n) {
    const VertexId sw = t.add_device({fmt::format("n{}.nvswitch", n), DeviceKind::nvswitch, n, -1});
    for (int g = 0; g < 2; ++g) {
      const VertexId gpu = t.add_device({fmt::format("n{}.gpu{}", n, g), DeviceKind::gpu, n, -1});
      const VertexId nic = t.add_device({fmt::format("n{}.nic{}", n, g), DeviceKind::nic, n, -1});
      t.connect(gpu, sw, nvlink_bytes_per_s, 0, LinkClass::nvlink);
      t.connect(gpu, nic, nvlink_bytes_per_s, 0, LinkClass::pcie);
      t.connect(nic, fabric, ib_bytes_per_s, 0, LinkClass::ib);
    }
  }
  return t;
}

// Peak `flops_per_s` at 100% efficiency for every block, no launch overhead,
// no alpha, no caps, no interference: block time = FLOPs / peak exactly.
inline CalibrationProfile ideal_profile(double flops_per_s) {
  CalibrationProfile p;
  p.source = "ideal";
  p.gpu = "test";
  p.peak_flops = flops_per_s;
  p.merge_bytes_per_s = 1e15;
  p.forward[128].points = {{1.0, 1.0}};
  p.backward[128].points = {{1.0, 1.0}};
  p.causal_efficiency.points = {{1.0, 1.0}};
  for (auto& link : p.links) {
    link.defined = true;
    link.efficiency = 1.0;
  }
  return p;
}

}  // namespace tilesim::testing
