// Published measurements as validation cases (validation/*.yaml), predicted by the simulator.
//
// A case (paths relative to the file):
//   source: "FlashAttention README, FA3 forward H100 BF16, d128, 16K tokens"   # citation
//   scenario: ../scenarios/ring-256k.yaml
//   set: [attention.seq_len=16K]          # optional --set overrides
//   metric: single_gpu_tflops             # what the source reports, see below
//   reported: 648                         # the published figure, in the metric's unit
// Metrics: single_gpu_tflops = the attention's FLOPs / the simulator's one-GPU time (TFLOP/s;
// FLOPs by the FlashAttention convention, causal halved); p2p_bandwidth_gb_s = the bytes of the
// largest transfer / its simulated time from posting to arrival (GB/s, 1e9), what a
// point-to-point bandwidth test reports; makespan_s = the simulated makespan (s).
// Error = (predicted - reported) / reported.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace tilesim::validation {

struct PublishedCase {
  std::string file;
  std::string source;
  std::string metric;
  double reported = 0.0;
  std::string scenario;           // resolved against the case file
  std::vector<std::string> sets;  // --set overrides
  double predicted = 0.0;
  double rel_error() const { return reported != 0.0 ? (predicted - reported) / reported : 0.0; }
};

// Reads one case (predicted left 0); InputError (file, line, key) for a malformed one.
PublishedCase load_published_case(const std::string& file);
// Loads and predicts every *.yaml of the directory; InputError for a malformed case.
std::vector<PublishedCase> run_published_cases(const std::string& directory);

void print_published(std::ostream& out, const std::vector<PublishedCase>& cases);
nlohmann::ordered_json published_to_json(const std::vector<PublishedCase>& cases);

}  // namespace tilesim::validation
