// Cost-model regression cases: a scenario plus the prediction it is expected to give.
//
// A case file (YAML, paths relative to it):
//   scenario: ../../scenarios/ring-256k.yaml
//   set: [schedule.gpus=4, attention.seq_len=32K]   # optional --set overrides
//   tolerance: 1e-6                                 # relative, per figure
//   expected: {makespan_s: 0.0123, comm_bytes_total: 1.2e9, peak_memory_bytes_max: 3.4e8}
// A figure passes when |got - expected| <= tolerance * |expected|. `update` rewrites the
// expectations with what the simulator predicts now (a deliberate cost-model change).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tilesim::validation {

struct RegressFigure {
  std::string name;  // makespan_s | comm_bytes_total | peak_memory_bytes_max
  double expected = 0.0;
  double got = 0.0;
  double rel_change() const;
};

struct RegressCase {
  std::string file;
  std::string scenario_path;  // as written (relative to the case file)
  std::vector<std::string> sets;
  double tolerance = 0.0;
  std::vector<RegressFigure> figures;  // expected filled by the loader
};

// Throws InputError (file, line, key) for a malformed case.
RegressCase load_regress_case(const std::string& path);

// Simulates the case's scenario and fills every figure's `got`; returns true when all pass.
bool run_regress_case(RegressCase& c);

// The case file's text with expected = got (`regress --update` writes it, all cases or none,
// through sim/core/atomic_file.hpp).
void write_regress_case(std::ostream& out, const RegressCase& c);
// Rewrites one case file with expected = got, whole or not at all.
void update_regress_case(const RegressCase& c);

// The case files (*.yaml) of a directory, sorted; InputError when there is none.
std::vector<std::string> regress_case_files(const std::string& directory);

}  // namespace tilesim::validation
