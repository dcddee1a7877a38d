// Parsing of the node template (see node_template.hpp for the schema).
#include "sim/topology/node_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace tilesim {
namespace {

struct NameEntry {
  std::vector<int> members;
  int line = 0;
};

bool valid_name(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

DeviceKind parse_kind(const YamlMap& m) {
  const std::string kind =
      m.choice("kind", {"gpu", "nvswitch", "pcie_switch", "cpu", "nic", "ib_switch"});
  if (kind == "gpu") return DeviceKind::gpu;
  if (kind == "nvswitch") return DeviceKind::nvswitch;
  if (kind == "pcie_switch") return DeviceKind::pcie_switch;
  if (kind == "cpu") return DeviceKind::cpu;
  if (kind == "nic") return DeviceKind::nic;
  return DeviceKind::ib_switch;
}

YAML::Node sequence(const YamlMap& m, std::string_view key, const char* what) {
  YAML::Node n = m.node(key);
  if (!n.IsSequence() || n.size() == 0) {
    m.fail(key, fmt::format("expected a non-empty list of {}", what));
  }
  return n;
}

void register_name(std::map<std::string, NameEntry>& names, const YamlMap& m,
                   const std::string& name, std::vector<int> members) {
  const int line = m.line_of_key("name");
  auto [it, inserted] = names.emplace(name, NameEntry{std::move(members), line});
  if (!inserted) {
    m.fail("name", fmt::format("duplicate device name '{}' (already defined at line {})", name,
                               it->second.line));
  }
}

void parse_devices(const YamlMap& node, NodeTemplate& out,
                   std::map<std::string, NameEntry>& names) {
  const YAML::Node list = sequence(node, "devices", "devices");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YamlMap m(list[i], node.file(), fmt::format("{}[{}]", node.key_path("devices"), i));
    m.allow_only({"name", "kind", "count"});
    const std::string name = m.string("name");
    if (!valid_name(name)) {
      m.fail("name", fmt::format("expected a name of letters, digits, '_' or '-', got '{}'", name));
    }
    const DeviceKind kind = parse_kind(m);
    if (!m.has("count")) {
      register_name(names, m, name, {static_cast<int>(out.devices.size())});
      out.devices.push_back({name, kind});
      continue;
    }
    const std::int64_t count = m.integer("count");
    if (count < 1 || count > 4096) m.fail("count", "expected a device count from 1 to 4096");
    std::vector<int> members;
    for (std::int64_t k = 0; k < count; ++k) {
      const std::string member = fmt::format("{}{}", name, k);
      members.push_back(static_cast<int>(out.devices.size()));
      register_name(names, m, member, {members.back()});
      out.devices.push_back({member, kind});
    }
    register_name(names, m, name, members);
  }
  for (const auto& d : out.devices) {
    out.gpus += d.kind == DeviceKind::gpu ? 1 : 0;
    out.nics += d.kind == DeviceKind::nic ? 1 : 0;
  }
  if (out.gpus == 0) node.fail("devices", "expected at least one device of kind gpu");
}

void parse_links(const YamlMap& node, NodeTemplate& out,
                 const std::map<std::string, NameEntry>& names) {
  const YAML::Node list = sequence(node, "links", "links");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YamlMap m(list[i], node.file(), fmt::format("{}[{}]", node.key_path("links"), i));
    m.allow_only({"between", "class", "bandwidth", "latency", "pattern"});
    const YAML::Node ends = m.node("between");
    if (!ends.IsSequence() || ends.size() != 2 || !ends[0].IsScalar() || !ends[1].IsScalar()) {
      m.fail("between", "expected two device or group names, e.g. [gpu, nvswitch]");
    }
    std::vector<int> side[2];
    for (std::size_t e = 0; e < 2; ++e) {
      const std::string name = ends[e].Scalar();
      auto it = names.find(name);
      if (it == names.end()) m.fail("between", fmt::format("link to unknown device '{}'", name));
      side[e] = it->second.members;
    }
    const LinkClass cls = parse_link_class(m, "class");
    const double bandwidth = m.bandwidth_bytes_per_s("bandwidth");
    if (!(bandwidth > 0.0)) m.fail("bandwidth", "expected a positive bandwidth such as 450GB/s");
    const double latency_s = m.time_s("latency");
    if (latency_s > kMaxLinkLatencyS) m.fail("latency", "at most 1s (links take ns to us)");
    const Picoseconds latency = s_to_ps(latency_s);
    const std::string pattern =
        m.has("pattern") ? m.choice("pattern", {"matched", "all"}) : "matched";

    std::vector<std::pair<int, int>> pairs;
    if (pattern == "all") {
      for (int a : side[0]) {
        for (int b : side[1]) {
          if (a != b) pairs.emplace_back(a, b);
        }
      }
    } else {
      const std::size_t na = side[0].size();
      const std::size_t nb = side[1].size();
      const std::size_t large = std::max(na, nb);
      const std::size_t small = std::min(na, nb);
      if (large % small != 0) {
        m.fail("between", fmt::format("groups of {} and {} devices cannot be matched; expected "
                                      "sizes where one divides the other, or pattern: all",
                                      na, nb));
      }
      const std::size_t ratio = large / small;
      for (std::size_t k = 0; k < large; ++k) {
        const int a = na == large ? side[0][k] : side[0][k / ratio];
        const int b = nb == large ? side[1][k] : side[1][k / ratio];
        pairs.emplace_back(a, b);
      }
    }
    for (auto [a, b] : pairs) {
      if (a == b) {
        m.fail("between", fmt::format("link from device '{}' to itself", out.devices[a].name));
      }
      out.links.push_back({a, b, bandwidth, latency, cls});
    }
  }
}

}  // namespace

LinkClass parse_link_class(const YamlMap& map, std::string_view key) {
  const std::string cls = map.choice(key, {"nvlink", "pcie", "upi", "ib", "ethernet"});
  if (cls == "nvlink") return LinkClass::nvlink;
  if (cls == "pcie") return LinkClass::pcie;
  if (cls == "upi") return LinkClass::upi;
  if (cls == "ib") return LinkClass::ib;
  return LinkClass::ethernet;
}

NodeTemplate parse_node_template(const YamlMap& node) {
  node.allow_only({"devices", "links"});
  NodeTemplate out;
  std::map<std::string, NameEntry> names;
  parse_devices(node, out, names);
  parse_links(node, out, names);
  return out;
}

}  // namespace tilesim
