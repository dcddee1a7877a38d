// Published measurements as validation cases (validation/cases/*.yaml), predicted by the
// simulator.
//
// A case (paths relative to the file):
//   source: {id: ring-flash-attention-readme, cite: "README table ..., 8xA100, 38.2 iter/s"}
//   role: held-out                        # or fit: the figure set a profile value
//   scenario: ../../scenarios/ring-256k.yaml
//   set: [attention.seq_len=64K]          # optional --set overrides
//   metric: iterations_per_s              # what the source reports, see below
//   reported: 38.2                        # the published figure, in the metric's unit
//   tolerance: 0.25                       # |rel_error| allowed
//   order_group: rfa-a100-fwd             # optional: cases of one setup, checked for order
//   excluded: "why"                       # optional, held-out only: predicted and listed, but
//                                         # left out of the held-out figures and order checks
// The case's name is its file's stem. Metrics: single_gpu_tflops = the attention's FLOPs / the
// simulator's one-GPU time (TFLOP/s; FLOPs by the FlashAttention convention, causal halved);
// p2p_bandwidth_gb_s = the bytes of the largest transfer / its simulated time from posting to
// arrival (GB/s, 1e9), what a point-to-point bandwidth test reports; makespan_s = the simulated
// makespan (s); iterations_per_s = 1 / makespan (a benchmark loop of one attention call).
// rel_error = (predicted - reported) / reported.
#pragma once

#include <string>
#include <vector>

namespace tilesim::validation {

enum class CaseRole { fit, held_out };

struct PublishedCase {
  std::string file;
  std::string name;  // file stem
  std::string source_id;
  std::string cite;
  CaseRole role = CaseRole::held_out;
  int gpus = 0;
  std::string schedule;
  std::string metric;
  double reported = 0.0;
  double predicted = 0.0;
  double tolerance = 0.0;
  std::string order_group;            // empty: none
  std::string scenario;               // path of the scenario, resolved against the file
  std::vector<std::string> sets;      // its --set overrides
  std::vector<std::string> warnings;  // the simulation's table-range warnings
  // Non-empty: why the source's setup is one the model cannot be set up for (e.g. a machine
  // other than the one it states); the case is still predicted and reported.
  std::string excluded;
  bool is_excluded() const { return !excluded.empty(); }
  double rel_error() const { return reported != 0.0 ? (predicted - reported) / reported : 0.0; }
  bool within_tolerance() const;
  // Faster is better: for makespan_s a smaller figure, for the rate metrics a larger one.
  bool lower_is_faster() const { return metric == "makespan_s"; }
};

std::string_view to_string(CaseRole role);

// Reads one case without predicting it (gpus, schedule, predicted left empty); InputError
// (file, line, key) for a malformed one.
PublishedCase load_published_case(const std::string& file);
// Loads and predicts every *.yaml of `cases_directory`; InputError for a malformed case.
std::vector<PublishedCase> run_published_cases(const std::string& cases_directory);

}  // namespace tilesim::validation
