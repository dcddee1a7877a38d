#include "sim/validation/op_times_json.hpp"

#include <fmt/format.h>

#include "sim/core/input_error.hpp"

namespace tilesim::validation {

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
    const double start_s = rec["start_s"].get<double>();
    const double end_s = rec["end_s"].get<double>();
    if (!(start_s >= 0.0) || !(end_s >= start_s)) {
      throw InputError(
          file, 0, key,
          fmt::format("0 <= start_s <= end_s, got start_s {} and end_s {}", start_s, end_s));
    }
    timings[static_cast<std::size_t>(index)] = OpTiming{s_to_ps(start_s), s_to_ps(end_s)};
  }
  // A finished run times every op but the frees; a gap means a truncated or edited file.
  int missing = 0;
  OpId first_missing;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind == OpKind::free) continue;
      if (ops[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)].start_ps >= 0) continue;
      if (missing++ == 0) first_missing = OpId{r, i};
    }
  }
  if (missing > 0) {
    throw InputError(file, 0, "op_times",
                     fmt::format("a time for every op of the plan but the frees; {} have none, "
                                 "the first {}",
                                 missing, plan.describe(first_missing)));
  }
  return ops;
}

}  // namespace tilesim::validation
