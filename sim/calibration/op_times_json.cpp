#include "sim/calibration/op_times_json.hpp"

#include <fmt/format.h>

#include "sim/core/input_error.hpp"

namespace tilesim::calibration {

nlohmann::ordered_json op_times_to_json(const Plan& plan, const SimulationResult& result) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < result.ops.size(); ++r) {
    const RankProgram& program = plan.programs[r];
    for (std::size_t i = 0; i < result.ops[r].size(); ++i) {
      const OpTiming& t = result.ops[r][i];
      if (t.start_ps < 0 || t.end_ps < 0) continue;
      ops.push_back({{"rank", r},
                     {"index", i},
                     {"kind", std::string(to_string(program.op(static_cast<int>(i)).kind))},
                     {"start_s", ps_to_s(t.start_ps)},
                     {"end_s", ps_to_s(t.end_ps)}});
    }
  }
  return ops;
}

std::vector<std::vector<OpTiming>> op_times_from_json(const nlohmann::json& document,
                                                      const Plan& plan, const std::string& file) {
  if (!document.is_object() || !document.contains("op_times") || !document["op_times"].is_array()) {
    throw InputError(file, 0, "op_times",
                     "expected per-op times; write the run with `tilesim run --json`");
  }
  std::vector<std::vector<OpTiming>> ops(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    ops[static_cast<std::size_t>(r)].resize(plan.programs[static_cast<std::size_t>(r)].size());
  }
  const auto& records = document["op_times"];
  for (std::size_t k = 0; k < records.size(); ++k) {
    const auto& rec = records[k];
    const std::string key = fmt::format("op_times[{}]", k);
    for (const char* field : {"rank", "index", "start_s", "end_s"}) {
      if (!rec.is_object() || !rec.contains(field) || !rec[field].is_number()) {
        throw InputError(file, 0, key + "." + field, "expected a number");
      }
    }
    const int rank = rec["rank"].get<int>();
    const int index = rec["index"].get<int>();
    if (rank < 0 || rank >= plan.ranks) {
      throw InputError(file, 0, key + ".rank",
                       fmt::format("a rank of the plan (0..{})", plan.ranks - 1));
    }
    auto& timings = ops[static_cast<std::size_t>(rank)];
    if (index < 0 || index >= static_cast<int>(timings.size())) {
      throw InputError(file, 0, key + ".index",
                       fmt::format("an op of rank {} (0..{}); was the run made from the same "
                                   "scenario and --set values?",
                                   rank, timings.size() - 1));
    }
    timings[static_cast<std::size_t>(index)] =
        OpTiming{s_to_ps(rec["start_s"].get<double>()), s_to_ps(rec["end_s"].get<double>())};
  }
  return ops;
}

}  // namespace tilesim::calibration
