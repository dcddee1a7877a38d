#include "sim/calibration/profile_writer.hpp"

#include <fmt/format.h>

#include <sstream>

namespace tilesim::calibration {
namespace {

std::string curve_yaml(const EfficiencyCurve& curve) {
  std::string text = "{";
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    text += fmt::format("{}{:.0f}: {:.6g}", i ? ", " : "", curve.points[i].first,
                        curve.points[i].second);
  }
  return text + "}";
}

void write_table(std::ostream& out, const char* name, const std::map<int, EfficiencyCurve>& table) {
  out << "  " << name << ":\n";
  for (const auto& [d, curve] : table) out << fmt::format("    d{}: {}\n", d, curve_yaml(curve));
}

std::string link_yaml(const LinkCost& cost) {
  const std::string cap = cost.flow_cap_bytes_per_s > 0
                              ? fmt::format("{:.6g}GB/s", cost.flow_cap_bytes_per_s / 1e9)
                              : std::string("none");
  return fmt::format("{{efficiency: {:.6g}, alpha: {:.6g}us, flow_cap: {}}}", cost.efficiency,
                     cost.alpha_s * 1e6, cap);
}

}  // namespace

void write_profile(std::ostream& out, const CalibrationProfile& p, const std::string& header,
                   LinkClass fallback_class) {
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << "gpu: " << p.gpu << "\n";
  out << "compute:\n";
  out << fmt::format("  peak: {:.6g}GFLOP/s\n", p.peak_flops / 1e9);
  out << fmt::format("  launch_overhead: {:.6g}us\n", p.launch_overhead_s * 1e6);
  out << fmt::format("  merge_bandwidth: {:.6g}GB/s\n", p.merge_bytes_per_s / 1e9);
  out << fmt::format("  comm_slowdown: {:.6g}\n", p.comm_slowdown);
  if (p.compute_cores > 0) out << fmt::format("  cores: {:.6g}\n", p.compute_cores);
  if (p.device_memory_bytes > 0) out << fmt::format("  memory: {:.0f}B\n", p.device_memory_bytes);
  out << fmt::format("  comm_slowdown_min_bytes: {:.0f}B\n", p.comm_slowdown_min_bytes);
  if (p.occupancy.enabled()) {
    const std::string lone =
        p.occupancy.lone_cta_throughput > 0
            ? fmt::format(", lone_cta_throughput: {:.6g}", p.occupancy.lone_cta_throughput)
            : std::string();
    out << fmt::format(
        "  occupancy: {{sms: {}, ctas_per_sm: {}, cta_tokens: {}, reference_ctas: {:.0f}{}}}\n",
        p.occupancy.sms, p.occupancy.ctas_per_sm, p.occupancy.cta_tokens,
        p.occupancy.reference_ctas, lone);
  }
  out << "  causal_efficiency: " << curve_yaml(p.causal_efficiency) << "\n";
  write_table(out, "forward", p.forward);
  write_table(out, "backward", p.backward);
  out << "links:\n";
  for (LinkClass cls :
       {LinkClass::nvlink, LinkClass::pcie, LinkClass::upi, LinkClass::ib, LinkClass::ethernet}) {
    const LinkCost& cost = p.link(cls);
    if (cost.defined) {
      out << fmt::format("  {}: {}\n", to_string(cls), link_yaml(cost));
    } else if (cls != LinkClass::ethernet) {
      out << fmt::format("  {}: {}  # not measured: the {} values\n", to_string(cls),
                         link_yaml(p.link(fallback_class)), to_string(fallback_class));
    }
  }
}

}  // namespace tilesim::calibration
