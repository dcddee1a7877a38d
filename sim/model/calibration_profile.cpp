#include "sim/model/calibration_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"

namespace tilesim {

namespace {

// The nearest head_dim row; ties go to the larger one. Null for an empty table.
const EfficiencyCurve* nearest_row(const std::map<int, EfficiencyCurve>& table, int head_dim,
                                   int* row_dim) {
  const EfficiencyCurve* best = nullptr;
  int best_distance = 0;
  for (const auto& [d, curve] : table) {
    const int distance = std::abs(d - head_dim);
    if (best == nullptr || distance <= best_distance) {
      best = &curve;
      best_distance = distance;
      *row_dim = d;
    }
  }
  return best;
}

}  // namespace

double CalibrationProfile::efficiency(Pass pass, int head_dim, double block_tokens) const {
  int row_dim = 0;
  const EfficiencyCurve* row =
      nearest_row(pass == Pass::fwd ? forward : backward, head_dim, &row_dim);
  return row ? row->at(block_tokens) : 1.0;
}

double CalibrationProfile::call_efficiency(const AttentionCall& call, TableRangeLog* log) const {
  int row_dim = 0;
  const EfficiencyCurve* row =
      nearest_row(call.pass == Pass::fwd ? forward : backward, call.head_dim, &row_dim);
  double e = 1.0;
  if (row != nullptr) {
    const double size = std::sqrt(call.q_tokens * call.kv_tokens);
    const CurveLookup found = row->lookup(size);
    if (log != nullptr) {
      log->note(fmt::format("{} d{} efficiency", call.pass == Pass::fwd ? "forward" : "backward",
                            row_dim),
                found, size);
    }
    e = found.value;
  }
  // The forward kernel tiles queries, the backward's dK/dV pass tiles keys.
  const double tiled = call.pass == Pass::fwd ? call.q_tokens : call.kv_tokens;
  if (call.tile_work.empty()) {
    e *= occupancy.factor(occupancy.ctas(call.batch, call.heads, tiled));
  } else {
    const double groups = static_cast<double>(call.batch) * call.heads;
    e *= occupancy.causal_factor(call.tile_work, groups, call.pass == Pass::fwd,
                                 std::sqrt(call.q_tokens * call.kv_tokens));
  }
  return std::min(1.0, e);
}

double CalibrationProfile::causal_factor(double block_tokens, TableRangeLog* log) const {
  const CurveLookup found = causal_efficiency.lookup(block_tokens);
  if (log != nullptr) log->note("causal_efficiency", found, block_tokens);
  return found.value;
}

namespace {

std::map<int, EfficiencyCurve> read_efficiency(const YamlMap& table) {
  std::map<int, EfficiencyCurve> out;
  for (const std::string& key : table.keys()) {
    if (key.size() < 2 || key[0] != 'd' || !parse_tokens(key.substr(1))) {
      table.fail(key, "expected a head_dim row such as d64 or d128");
    }
    const auto head_dim_value = *parse_tokens(key.substr(1));
    if (head_dim_value < 1 || head_dim_value > 65536)
      table.fail(key, "expected a head_dim in 1..65536");
    const int head_dim = static_cast<int>(head_dim_value);
    if (out.count(head_dim) != 0) table.fail(key, "this head_dim has a row already");
    const YamlMap row = table.map(key);
    EfficiencyCurve curve;
    for (const std::string& size : row.keys()) {
      auto tokens = parse_tokens(size);
      if (!tokens || *tokens == 0) row.fail(size, "expected a block size in tokens (512, 2K...)");
      const double e = row.number(size);
      if (!(e > 0.0 && e <= 1.0)) row.fail(size, "expected an efficiency in (0, 1]");
      curve.points.emplace_back(static_cast<double>(*tokens), e);
    }
    if (curve.points.empty()) table.fail(key, "expected at least one (tokens: efficiency) entry");
    std::sort(curve.points.begin(), curve.points.end());
    out[head_dim] = curve;
  }
  if (out.empty()) throw InputError(table.file(), table.line(), table.path(), "empty table");
  return out;
}

// A single factor, or a table {tokens: factor} interpolated like efficiency.
EfficiencyCurve read_causal(const YamlMap& compute);

double fraction(const YamlMap& m, std::string_view key, double lo, double hi) {
  const double v = m.number(key);
  if (!(v >= lo && v <= hi)) m.fail(key, fmt::format("expected a number in [{}, {}]", lo, hi));
  return v;
}

EfficiencyCurve read_causal(const YamlMap& compute) {
  EfficiencyCurve curve;
  const YAML::Node node = compute.node("causal_efficiency");
  if (node.IsScalar()) {
    curve.points = {{1.0, fraction(compute, "causal_efficiency", 0.01, 1.0)}};
    return curve;
  }
  const YamlMap table = compute.map("causal_efficiency");
  for (const std::string& size : table.keys()) {
    auto tokens = parse_tokens(size);
    if (!tokens || *tokens == 0) table.fail(size, "expected a block size in tokens (2K, 16K...)");
    curve.points.emplace_back(static_cast<double>(*tokens), fraction(table, size, 0.01, 1.0));
  }
  if (curve.points.empty()) compute.fail("causal_efficiency", "expected a factor or a table");
  std::sort(curve.points.begin(), curve.points.end());
  return curve;
}

// compute.occupancy: {sms, ctas_per_sm, cta_tokens, reference_ctas[, lone_cta_throughput]}
// (occupancy.hpp).
OccupancyModel read_occupancy(const YamlMap& m) {
  m.allow_only({"sms", "ctas_per_sm", "cta_tokens", "reference_ctas", "lone_cta_throughput"});
  const auto count = [&](std::string_view key, double hi) {
    const double v = m.number(key);
    if (!(v >= 1.0 && v <= hi && v == std::floor(v))) {
      m.fail(key, fmt::format("expected a whole number between 1 and {}", hi));
    }
    return v;
  };
  OccupancyModel o;
  o.sms = static_cast<int>(count("sms", 100000));
  o.ctas_per_sm = static_cast<int>(count("ctas_per_sm", 64));
  o.cta_tokens = static_cast<int>(count("cta_tokens", 65536));
  o.reference_ctas = count("reference_ctas", 1e9);
  if (m.has("lone_cta_throughput")) {
    // One CTA gets at least its fair share of a full SM and at most the whole SM.
    const double lone = m.number("lone_cta_throughput");
    const double fair = 1.0 / o.ctas_per_sm;
    if (!(lone >= fair && lone <= 1.0)) {
      m.fail(
          "lone_cta_throughput",
          fmt::format("expected a fraction of the SM between 1/ctas_per_sm = {:.6g} and 1", fair));
    }
    o.lone_cta_throughput = lone;
  }
  return o;
}

}  // namespace

CalibrationProfile load_calibration(const std::string& path) {
  const YamlMap root(load_yaml_file(path), path, "");
  root.allow_only({"gpu", "compute", "links"});
  CalibrationProfile p;
  p.source = path;
  p.gpu = root.string("gpu");

  const YamlMap compute = root.map("compute");
  compute.allow_only({"peak", "launch_overhead", "merge_bandwidth", "comm_slowdown",
                      "comm_slowdown_min_bytes", "causal_efficiency", "forward", "backward",
                      "cores", "occupancy", "memory"});
  p.peak_flops = compute.flop_rate("peak");
  if (!(p.peak_flops >= 1e6)) compute.fail("peak", "expected at least 1MFLOP/s (e.g. 989TFLOP/s)");
  p.launch_overhead_s = compute.time_s("launch_overhead");
  p.merge_bytes_per_s = compute.bandwidth_bytes_per_s("merge_bandwidth");
  if (p.merge_bytes_per_s <= 0) compute.fail("merge_bandwidth", "expected a positive bandwidth");
  p.comm_slowdown = fraction(compute, "comm_slowdown", 0.0, 10.0);
  if (compute.has("comm_slowdown_min_bytes")) {
    p.comm_slowdown_min_bytes = compute.bytes("comm_slowdown_min_bytes");
    if (!(p.comm_slowdown_min_bytes >= 0.0 && p.comm_slowdown_min_bytes <= 1e12)) {
      compute.fail("comm_slowdown_min_bytes", "expected a size between 0B and 1TB (e.g. 64KiB)");
    }
  }
  if (compute.has("cores")) {
    p.compute_cores = compute.number("cores");
    if (!(p.compute_cores >= 1.0 && p.compute_cores <= 1e6)) {
      compute.fail("cores", "expected a number of cores between 1 and 1000000");
    }
  }
  if (compute.has("memory")) {
    p.device_memory_bytes = compute.bytes("memory");
    if (!(p.device_memory_bytes >= 1e6 && p.device_memory_bytes <= 1e15)) {
      compute.fail("memory", "expected the device's memory, between 1MB and 1PB (e.g. 80GB)");
    }
  }
  if (compute.has("occupancy")) p.occupancy = read_occupancy(compute.map("occupancy"));
  p.causal_efficiency = read_causal(compute);
  p.forward = read_efficiency(compute.map("forward"));
  p.backward = read_efficiency(compute.map("backward"));

  const YamlMap links = root.map("links");
  links.allow_only({"nvlink", "pcie", "upi", "ib", "ethernet"});
  for (LinkClass cls :
       {LinkClass::nvlink, LinkClass::pcie, LinkClass::upi, LinkClass::ib, LinkClass::ethernet}) {
    const std::string name(to_string(cls));
    if (!links.has(name)) {
      if (cls == LinkClass::ethernet) continue;  // optional: only clusters on Ethernet use it
      links.fail(name, "missing link class; expected efficiency, alpha and flow_cap");
    }
    const YamlMap m = links.map(name);
    m.allow_only({"efficiency", "alpha", "flow_cap"});
    LinkCost& cost = p.links[static_cast<std::size_t>(cls)];
    cost.defined = true;
    cost.efficiency = fraction(m, "efficiency", 0.01, 1.0);
    cost.alpha_s = m.time_s("alpha");
    if (m.has("flow_cap")) {
      const auto cap = m.node("flow_cap");
      const bool none = cap.IsScalar() && cap.Scalar() == "none";
      cost.flow_cap_bytes_per_s = none ? 0.0 : m.bandwidth_bytes_per_s("flow_cap");
      if (!none && !(cost.flow_cap_bytes_per_s > 0.0)) {
        m.fail("flow_cap", "expected a positive bandwidth, or none for no cap");
      }
    }
  }
  return p;
}

}  // namespace tilesim
