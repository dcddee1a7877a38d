// A scenario: the cluster, the attention shape, the schedule and the costs.
//
// YAML (paths relative to the scenario file; keys may grow, not change):
//   name: ring-256k
//   topology: ../topologies/dgx-h100.yaml
//   attention: {seq_len: 256K, batch: 1, heads: 32, kv_heads: 32, head_dim: 128,
//               dtype: bf16, causal: false, pass: forward}
//   schedule: {kind: ring, gpus: 8}
//   calibration: ../topologies/h100.calib.yaml    # optional
//   job: {gpus: 16384, tp: 8, dp: 128, order: tp-cp-dp}  # optional (sim/job/job_layout.hpp)
// With `job`, the schedule runs as one CP group of schedule.gpus ranks among
// job.gpus / (tp x schedule.gpus) x tp groups sharing the fabric; `attention` holds the
// group's heads (heads / tp, kv_heads / tp) and job.model_heads the model's.
// Without `calibration`, the profile for the topology's GPU model is used
// (<topology dir>/<model>.calib.yaml, e.g. h100.calib.yaml for H100-SXM).
// `--set key.path=value` overrides any field before it is read; the value is
// parsed as YAML. Every error is an InputError naming file, line and key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/job/job_layout.hpp"
#include "sim/plan/attention_shape.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

struct Scenario {
  std::string file;
  std::string name;
  std::string topology_path;     // resolved
  std::string calibration_path;  // resolved (explicit or the GPU model's default)
  AttentionShape attention;
  ScheduleSpec schedule;
  std::optional<JobSpec> job;
  YAML::Node document;                 // after overrides; for the lines of later errors
  std::vector<std::string> overrides;  // the --set strings applied, in order
  ResourceLimits limits;               // not from the file: --max-memory, --max-ops

  // 1-based line of a key path such as "schedule.gpus" (its nearest parent if
  // absent), for errors found after loading.
  int line_of_key(const std::string& key_path) const;
  // An error found after loading at `key_path`: named by its --set override when one set
  // the key (or a parent of it), else by the file's line.
  InputError error_at(const std::string& key_path, const std::string& expected) const;
};

// `overrides` are "key.path=value" strings from --set.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);
// The same for a document given as YAML (or JSON) text, read as if it were the file `path`:
// relative paths resolve from its directory and errors name it.
Scenario load_scenario_text(const std::string& text, const std::string& path,
                            const std::vector<std::string>& overrides);

// The default profile for a GPU model next to the topology file.
std::string default_calibration_path(const std::string& topology_path,
                                     const std::string& gpu_model);

}  // namespace tilesim
