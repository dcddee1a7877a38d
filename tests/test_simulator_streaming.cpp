// Streaming results (simulator.hpp): the per-rank totals the simulator accumulates as events
// happen equal those read back from the per-op records, and the result JSON is byte-identical
// with the records kept or not, for every schedule kind on 8 to 256 GPUs of the H100 cluster
// (NVLink inside a node, InfiniBand across, so transfers contend). The reference is an
// independent implementation of the same definitions: exposed_comm_ps() walks a rank's
// recorded op times in program order (exposed_comm.hpp), and a rank's end is the latest end
// of its recorded ops. The same plans also pass the full validator here, which is the proof
// `simulate` relies on when it skips the dry run beyond kFullCheckMaxRanks ranks
// (prepared_scenario.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/model/exposed_comm.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "tests/gpu_counts.hpp"

using namespace tilesim;

namespace {

struct Case {
  std::vector<std::string> sets;
};

std::vector<Case> cases_at(int gpus) {
  const std::string g = "schedule.gpus=" + std::to_string(gpus);
  // 512 tokens per GPU keeps the 256-GPU plans small enough for a unit test.
  const std::string len = "attention.seq_len=" + std::to_string(512 * gpus);
  const std::string tile = gpus == 8    ? "schedule.tile=[2, 4]"
                           : gpus == 64 ? "schedule.tile=[8, 8]"
                                        : "schedule.tile=[16, 16]";
  std::vector<Case> cases = {
      {{g, len, "schedule.kind=ring"}},
      {{g, len, "schedule.kind=zigzag", "attention.causal=true"}},
      {{g, len, "schedule.kind=striped", "attention.causal=true"}},
      {{g, len, "schedule.kind=pass_q"}},
      {{g, len, "schedule.kind=allgather_kv", "attention.causal=true"}},
      {{g, len, "schedule.kind=usp", "schedule.ulysses=8"}},
      {{g, len, "schedule.kind=double_ring", "schedule.inner=8"}},
      {{g, len, "schedule.kind=mesh", tile}},
  };
  if (gpus <= 32) {  // Ulysses needs a head per GPU (32 heads)
    cases.push_back({{g, len, "schedule.kind=ulysses"}});
  }
  if (gpus <= 64) {  // the backward doubles the plan; cover it where plans are small
    cases.push_back({{g, len, "schedule.kind=ring", "attention.pass=both"}});
    cases.push_back(
        {{g, len, "schedule.kind=zigzag", "attention.causal=true", "attention.pass=backward"}});
    cases.push_back({{g, len, "schedule.kind=mesh", tile, "attention.pass=both"}});
  }
  return cases;
}

std::string joined(const std::vector<std::string>& sets) {
  std::string s;
  for (const std::string& x : sets) s += x + " ";
  return s;
}

}  // namespace

TEST_CASE("streaming totals equal the per-op records and give byte-identical result JSON") {
  const std::string scenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";
  for (int gpus : tilesim::test::gpu_counts({8, 64, 256})) {
    for (const Case& c : cases_at(gpus)) {
      INFO(joined(c.sets));
      const PreparedScenario p = prepare_scenario(scenario, c.sets);
      const Plan plan = build_valid_plan(p.scenario);  // throws when the validator objects
      SimulationOptions full;
      full.record_ops = full.record_transfers = true;
      const SimulationResult recorded = simulate(plan, p.topology, p.profile, full);
      const SimulationResult streamed = simulate(plan, p.topology, p.profile);
      CHECK(streamed.ops.empty());
      CHECK(streamed.transfers.empty());
      REQUIRE(recorded.ops.size() == static_cast<std::size_t>(plan.ranks));
      for (int r = 0; r < plan.ranks; ++r) {
        const auto& ops = recorded.ops[static_cast<std::size_t>(r)];
        Picoseconds end_ps = 0;
        for (const OpTiming& t : ops) end_ps = std::max(end_ps, t.end_ps);
        const RankTotals& got = streamed.ranks[static_cast<std::size_t>(r)];
        CHECK(got.end_ps == end_ps);
        CHECK(got.exposed_comm_ps == exposed_comm_ps(plan, ops, r));
      }
      const ResultContext context{p.scenario.name, p.scenario.topology_path,
                                  p.scenario.calibration_path, false};
      CHECK(result_to_json(plan, streamed, context).dump(2) ==
            result_to_json(plan, recorded, context).dump(2));
    }
  }
}
