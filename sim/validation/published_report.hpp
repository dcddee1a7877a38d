// `tilesim validate --published DIR`: the published cases of DIR/cases/ predicted, checked
// against their tolerances, their order groups and the source separation of DIR/sources.yaml.
//
// Order: the cases of one order_group (one setup, several schedules) ranked fastest first by
// the reported figures and by the predicted ones; the group is reproduced when both rankings
// are equal. Known misses (DIR/known-misses.yaml, optional) name cases and order groups the
// model misses today, each with its likely cause:
//   cases: {CASE-NAME: "cause"}
//   order_groups: {GROUP: "cause"}
// A known miss is reported as a miss but does not fail the run; a listed case that is back
// within its tolerance (or a listed group back in order) fails as stale, so that the list
// follows the model. The run fails on any other case out of tolerance, group out of order, or
// source problem (published_sources.hpp). Held-out and fit cases are summarised separately
// (median and worst |rel_error|).
//
// Excluded cases (`excluded: "why"` in the case) are predicted and listed but take no part in
// the held-out summary, the tolerance checks or the order groups (a group is checked over its
// other cases). An exclusion is a property of a source's setup, so it must cover every case of
// that source: a source with excluded and included cases fails, as does a known miss that
// names an excluded case.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/validation/error_stats.hpp"
#include "sim/validation/published_case.hpp"

namespace tilesim::validation {

struct OrderCheck {
  std::string group;
  std::vector<std::string> reported_order;  // case names, fastest first
  std::vector<std::string> predicted_order;
  bool reproduced() const { return reported_order == predicted_order; }
};

struct PublishedReport {
  std::vector<PublishedCase> cases;
  std::vector<OrderCheck> orders;
  std::map<std::string, std::string> known_case_misses;   // name -> cause
  std::map<std::string, std::string> known_order_misses;  // group -> cause
  std::vector<std::string> failures;                      // why the run fails; empty: it passes
  ErrorSummary fit;
  ErrorSummary held_out;     // held-out cases that are not excluded
  int held_out_sources = 0;  // distinct source ids among them
  int excluded = 0;          // excluded cases
  int excluded_sources = 0;  // distinct source ids among them
  bool passed() const { return failures.empty(); }
};

// Ranks cases fastest first by reported (or predicted) figures; ties keep file order.
std::vector<std::string> speed_order(const std::vector<const PublishedCase*>& group,
                                     bool by_prediction);
// Builds the report from already predicted cases (no simulation): order checks, known misses,
// summaries and failures. `source_problems` come from published_sources.hpp.
PublishedReport assess_published(std::vector<PublishedCase> cases,
                                 std::map<std::string, std::string> known_case_misses,
                                 std::map<std::string, std::string> known_order_misses,
                                 const std::vector<std::string>& source_problems);
// Loads DIR/cases/*.yaml, DIR/sources.yaml and DIR/known-misses.yaml, predicts, assesses.
PublishedReport run_published(const std::string& directory);

void print_published(std::ostream& out, const PublishedReport& report);
nlohmann::ordered_json published_to_json(const PublishedReport& report);

}  // namespace tilesim::validation
