#include "sim/validation/published_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"
#include "sim/validation/published_sources.hpp"

namespace tilesim::validation {
namespace {

std::map<std::string, std::string> read_causes(const YamlMap& root, std::string_view key) {
  std::map<std::string, std::string> out;
  if (!root.has(key)) return out;
  const YamlMap m = root.map(key);
  for (const std::string& name : m.keys()) out[name] = m.string(name);
  return out;
}

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? separator : "") + names[i];
  return text;
}

}  // namespace

std::vector<std::string> speed_order(const std::vector<const PublishedCase*>& group,
                                     bool by_prediction) {
  std::vector<const PublishedCase*> sorted = group;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto* a, const auto* b) {
    const double x = by_prediction ? a->predicted : a->reported;
    const double y = by_prediction ? b->predicted : b->reported;
    return a->lower_is_faster() ? x < y : x > y;
  });
  std::vector<std::string> names;
  for (const PublishedCase* c : sorted) names.push_back(c->name);
  return names;
}

PublishedReport assess_published(std::vector<PublishedCase> cases,
                                 std::map<std::string, std::string> known_case_misses,
                                 std::map<std::string, std::string> known_order_misses,
                                 const std::vector<std::string>& source_problems) {
  PublishedReport r;
  r.cases = std::move(cases);
  r.known_case_misses = std::move(known_case_misses);
  r.known_order_misses = std::move(known_order_misses);
  r.failures = source_problems;
  std::vector<double> fit_errors;
  std::vector<double> held_errors;
  std::set<std::string> held_sources;
  std::map<std::string, std::vector<const PublishedCase*>> groups;
  std::set<std::string> excluded_sources;
  for (const PublishedCase& c : r.cases) {
    if (c.is_excluded()) {
      ++r.excluded;
      excluded_sources.insert(c.source_id);
      if (r.known_case_misses.count(c.name) != 0) {
        r.failures.push_back(fmt::format("{}: excluded; remove it from known-misses.yaml", c.name));
      }
      continue;
    }
    (c.role == CaseRole::fit ? fit_errors : held_errors).push_back(c.rel_error());
    if (c.role == CaseRole::held_out) held_sources.insert(c.source_id);
    if (!c.order_group.empty()) groups[c.order_group].push_back(&c);
    const bool known = r.known_case_misses.count(c.name) != 0;
    if (!c.within_tolerance() && !known) {
      r.failures.push_back(fmt::format("{}: error {:+.1f}% is outside its tolerance {:.0f}%",
                                       c.name, 100 * c.rel_error(), 100 * c.tolerance));
    } else if (c.within_tolerance() && known) {
      r.failures.push_back(
          fmt::format("{}: within its tolerance now; remove it from known-misses.yaml", c.name));
    }
  }
  for (const PublishedCase& c : r.cases) {
    if (!c.is_excluded() && excluded_sources.count(c.source_id) != 0) {
      r.failures.push_back(fmt::format(
          "{}: source {} has excluded cases; an exclusion covers every case of its source", c.name,
          c.source_id));
    }
  }
  for (const auto& [group, members] : groups) {
    if (members.size() < 2) {
      r.failures.push_back(fmt::format("order group {} has one case; expected two or more", group));
      continue;
    }
    for (const PublishedCase* m : members) {
      if (m->metric != members.front()->metric) {
        r.failures.push_back(fmt::format("order group {} mixes metrics {} and {}", group, m->metric,
                                         members.front()->metric));
      }
    }
    OrderCheck check{group, speed_order(members, false), speed_order(members, true)};
    const bool known = r.known_order_misses.count(group) != 0;
    if (!check.reproduced() && !known) {
      r.failures.push_back(fmt::format("order group {}: predicted {} but reported {}", group,
                                       join(check.predicted_order, " > "),
                                       join(check.reported_order, " > ")));
    } else if (check.reproduced() && known) {
      r.failures.push_back(
          fmt::format("order group {}: reproduced now; remove it from known-misses.yaml", group));
    }
    r.orders.push_back(std::move(check));
  }
  for (const auto& miss : r.known_case_misses) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda (P1091).
    const std::string& name = miss.first;
    const bool exists = std::any_of(r.cases.begin(), r.cases.end(),
                                    [&](const PublishedCase& c) { return c.name == name; });
    if (!exists) r.failures.push_back(fmt::format("known-misses.yaml: no case named {}", name));
  }
  for (const auto& [group, cause] : r.known_order_misses) {
    if (groups.count(group) == 0) {
      r.failures.push_back(fmt::format("known-misses.yaml: no order group named {}", group));
    }
  }
  r.fit = summarize_errors(fit_errors);
  r.held_out = summarize_errors(held_errors);
  r.held_out_sources = static_cast<int>(held_sources.size());
  r.excluded_sources = static_cast<int>(excluded_sources.size());
  return r;
}

PublishedReport run_published(const std::string& directory) {
  const std::filesystem::path dir(directory);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InputError(directory, 0, "", "expected a directory with cases/ and sources.yaml");
  }
  std::vector<PublishedCase> cases = run_published_cases((dir / "cases").string());
  const SourceRegistry registry = load_sources((dir / "sources.yaml").string());
  std::map<std::string, std::string> known_cases;
  std::map<std::string, std::string> known_orders;
  const std::string misses = (dir / "known-misses.yaml").string();
  if (std::filesystem::exists(misses, ec)) {
    const YamlMap root(load_yaml_file(misses), misses, "");
    root.allow_only({"cases", "order_groups"});
    known_cases = read_causes(root, "cases");
    known_orders = read_causes(root, "order_groups");
  }
  const std::vector<std::string> problems = source_problems(registry, cases);
  return assess_published(std::move(cases), std::move(known_cases), std::move(known_orders),
                          problems);
}

void print_published(std::ostream& out, const PublishedReport& r) {
  for (CaseRole role : {CaseRole::fit, CaseRole::held_out}) {
    out << fmt::format("{} cases\n", to_string(role));
    for (const PublishedCase& c : r.cases) {
      if (c.role != role) continue;
      const auto known = r.known_case_misses.find(c.name);
      const std::string verdict = c.is_excluded()        ? "EXCLUDED (" + c.excluded + ")"
                                  : c.within_tolerance() ? "ok"
                                  : known != r.known_case_misses.end()
                                      ? "MISS (known: " + known->second + ")"
                                      : "FAIL";
      out << fmt::format(
          "  {}: {} on {} GPUs, {}: reported {:.4g}, predicted {:.4g}, error "
          "{:+.1f}% (tolerance {:.0f}%) {}\n",
          c.name, c.schedule, c.gpus, c.metric, c.reported, c.predicted, 100.0 * c.rel_error(),
          100.0 * c.tolerance, verdict);
      out << fmt::format("    source {}: {}\n", c.source_id, c.cite);
    }
  }
  for (const OrderCheck& o : r.orders) {
    const auto known = r.known_order_misses.find(o.group);
    out << fmt::format("order {}: reported {}; predicted {}: {}\n", o.group,
                       join(o.reported_order, " > "), join(o.predicted_order, " > "),
                       o.reproduced() ? "reproduced"
                       : known != r.known_order_misses.end()
                           ? "NOT reproduced (known: " + known->second + ")"
                           : "NOT reproduced");
  }
  out << fmt::format("fit: {} cases, |error| median {:.1f}%, worst {:.1f}%\n", r.fit.count,
                     100.0 * r.fit.median_abs, 100.0 * r.fit.max_abs);
  const auto reproduced = std::count_if(r.orders.begin(), r.orders.end(),
                                        [](const OrderCheck& o) { return o.reproduced(); });
  out << fmt::format(
      "held-out: {} cases from {} sources, |error| median {:.1f}%, worst {:.1f}%; orders "
      "reproduced {} of {}\n",
      r.held_out.count, r.held_out_sources, 100.0 * r.held_out.median_abs,
      100.0 * r.held_out.max_abs, reproduced, r.orders.size());
  if (r.excluded > 0) {
    out << fmt::format("excluded: {} cases from {} sources (not in the figures above)\n",
                       r.excluded, r.excluded_sources);
  }
  for (const std::string& f : r.failures) out << "FAILED: " << f << "\n";
  out << (r.passed() ? "published validation passed\n" : "published validation FAILED\n");
}

nlohmann::ordered_json published_to_json(const PublishedReport& r) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const PublishedCase& c : r.cases) {
    const auto known = r.known_case_misses.find(c.name);
    list.push_back({{"name", c.name},
                    {"source", {{"id", c.source_id}, {"cite", c.cite}}},
                    {"role", std::string(to_string(c.role))},
                    {"gpus", c.gpus},
                    {"schedule", c.schedule},
                    {"metric", c.metric},
                    {"reported", c.reported},
                    {"predicted", c.predicted},
                    {"rel_error", c.rel_error()},
                    {"tolerance", c.tolerance},
                    {"within_tolerance", c.within_tolerance()},
                    {"known_miss", known != r.known_case_misses.end() ? known->second : ""},
                    {"order_group", c.order_group},
                    {"excluded", c.excluded},
                    {"warnings", c.warnings}});
  }
  j["cases"] = list;
  nlohmann::ordered_json orders = nlohmann::ordered_json::array();
  for (const OrderCheck& o : r.orders) {
    const auto known = r.known_order_misses.find(o.group);
    orders.push_back({{"group", o.group},
                      {"reported_order", o.reported_order},
                      {"predicted_order", o.predicted_order},
                      {"reproduced", o.reproduced()},
                      {"known_miss", known != r.known_order_misses.end() ? known->second : ""}});
  }
  j["orders"] = orders;
  const auto summary = [](const ErrorSummary& s) {
    return nlohmann::ordered_json{
        {"count", s.count}, {"median_abs_error", s.median_abs}, {"max_abs_error", s.max_abs}};
  };
  j["fit"] = summary(r.fit);
  j["held_out"] = summary(r.held_out);
  j["held_out"]["sources"] = r.held_out_sources;
  j["excluded"] = {{"count", r.excluded}, {"sources", r.excluded_sources}};
  j["failures"] = r.failures;
  j["passed"] = r.passed();
  return j;
}

}  // namespace tilesim::validation
