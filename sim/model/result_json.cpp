#include "sim/model/result_json.hpp"

#include "sim/plan/plan_digest.hpp"

namespace tilesim {

nlohmann::ordered_json plan_identity_json(const Plan& plan) {
  nlohmann::ordered_json j;
  j["gpus"] = plan.ranks;
  j["schedule"] = plan.schedule;
  j["tile"] = {plan.tile_a, plan.tile_b};
  j["seq_len"] = plan.shape.seq_len;
  j["causal"] = plan.shape.causal;
  j["mask"] = std::string(to_string(plan.shape.mask.kind));
  if (plan.shape.mask.kind == AttentionMaskKind::sliding_window) {
    j["window_tokens"] = plan.shape.mask.window_tokens;
  }
  if (plan.shape.mask.kind == AttentionMaskKind::documents) {
    j["documents"] = plan.shape.mask.document_starts.size();
  }
  j["pass"] = std::string(to_string(plan.shape.pass));
  j["batch"] = plan.shape.batch;
  j["heads"] = plan.shape.heads;
  j["kv_heads"] = plan.shape.kv_heads;
  j["head_dim"] = plan.shape.head_dim;
  if (plan.shape.value_dim() != plan.shape.head_dim) j["v_head_dim"] = plan.shape.value_dim();
  j["dtype"] = std::string(to_string(plan.shape.dtype));
  return j;
}

nlohmann::ordered_json result_to_json(const Plan& plan, const SimulationResult& result,
                                      const ResultContext& context) {
  const Figures f = summarize(result);
  nlohmann::ordered_json j;
  j["scenario"] = context.scenario;
  j["topology"] = context.topology;
  j["calibration"] = context.calibration;
  const nlohmann::ordered_json identity = plan_identity_json(plan);
  for (const auto& [key, value] : identity.items()) j[key] = value;
  j["plan_digest"] = context.plan_digest
                         ? *context.plan_digest
                         : plan_digest(plan);  // tilesim validate checks a run against its plan
  j["makespan_s"] = f.makespan_s;
  j["single_gpu_s"] = f.single_gpu_s;
  j["speedup"] = f.speedup;
  j["efficiency"] = f.efficiency;
  j["compute_s_max"] = f.compute_s_max;
  j["exposed_comm_s_max"] = f.exposed_comm_s_max;
  j["overlap"] = f.overlap;
  j["compute_balance"] = f.compute_balance;
  j["comm_bytes_total"] = f.comm_bytes_total;
  j["comm_bytes_per_rank_max"] = f.comm_bytes_per_rank_max;
  j["peak_memory_bytes_max"] = f.peak_memory_bytes_max;
  j["ops"] = plan.op_count();
  j["events"] = result.events;
  j["sim_wall_s"] = context.include_wall_clock ? result.sim_wall_s : 0.0;
  j["warnings"] = result.warnings;
  return j;
}

}  // namespace tilesim
