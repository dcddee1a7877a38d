// The node template of a topology YAML file: devices and links with names local
// to one node, instantiated once per node by the loader.
//
// Devices: `{name, kind, count?}`. With `count: N` the entry makes N devices
// name0..name{N-1} and `name` refers to the whole group; without it, one device.
// Links: `{between: [A, B], class, bandwidth, latency, pattern?}` where A and B
// are device or group names. pattern `matched` (default): equal group sizes pair
// member k with member k; if one size divides the other, member k of the larger
// group joins member k / (larger / smaller) of the smaller (so a single device
// joins every member). pattern `all`: every member of A with every member of B.
#pragma once

#include <string>
#include <vector>

#include "sim/core/yaml_reader.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct TemplateDevice {
  std::string name;  // local name, e.g. "gpu3"
  DeviceKind kind = DeviceKind::gpu;
};

struct TemplateLink {
  int a = -1;  // indices into NodeTemplate::devices
  int b = -1;
  double bandwidth_bytes_per_s = 0.0;
  Picoseconds latency_ps = 0;
  LinkClass cls = LinkClass::nvlink;
};

struct NodeTemplate {
  std::vector<TemplateDevice> devices;  // in declaration order
  std::vector<TemplateLink> links;
  int gpus = 0;
  int nics = 0;
};

// Parses the `node:` mapping; every error is an InputError naming file, line, key.
NodeTemplate parse_node_template(const YamlMap& node);

LinkClass parse_link_class(const YamlMap& map, std::string_view key);

}  // namespace tilesim
