#include "sim/validation/published_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"

namespace tilesim::validation {

std::set<std::string> SourceRegistry::fitted_ids() const {
  std::set<std::string> ids;
  for (const auto& [profile, keys] : profiles) {
    for (const auto& [key, list] : keys) ids.insert(list.begin(), list.end());
  }
  return ids;
}

SourceRegistry load_sources(const std::string& path) {
  const YamlMap root(load_yaml_file(path), path, "");
  root.allow_only({"topologies", "sources", "profiles"});
  SourceRegistry r;
  r.file = path;
  r.topologies_dir = (std::filesystem::path(path).parent_path() / root.string("topologies"))
                         .lexically_normal()
                         .string();
  const YamlMap sources = root.map("sources");
  for (const std::string& id : sources.keys()) r.sources[id] = sources.string(id);
  const YamlMap profiles = root.map("profiles");
  for (const std::string& profile : profiles.keys()) {
    const YamlMap keys = profiles.map(profile);
    auto& out = r.profiles[profile];
    for (const std::string& key : keys.keys()) {
      const YAML::Node node = keys.node(key);
      std::vector<std::string> ids;
      if (node.IsScalar()) {
        ids.push_back(node.Scalar());
      } else if (node.IsSequence() && node.size() > 0) {
        for (const YAML::Node& n : node) {
          if (!n.IsScalar()) keys.fail(key, "expected a source id or a list of source ids");
          ids.push_back(n.Scalar());
        }
      } else {
        keys.fail(key, "expected a source id or a list of source ids");
      }
      out[key] = ids;
    }
  }
  return r;
}

std::vector<std::string> profile_value_keys(const std::string& profile_path) {
  const YamlMap root(load_yaml_file(profile_path), profile_path, "");
  std::vector<std::string> keys;
  const YamlMap compute = root.map("compute");
  for (const std::string& k : compute.keys()) keys.push_back("compute." + k);
  const YamlMap links = root.map("links");
  for (const std::string& cls : links.keys()) {
    for (const std::string& field : links.map(cls).keys()) {
      keys.push_back(fmt::format("links.{}.{}", cls, field));
    }
  }
  return keys;
}

std::vector<std::string> source_problems(const SourceRegistry& registry,
                                         const std::vector<PublishedCase>& cases) {
  std::vector<std::string> problems;
  const auto declared = [&](const std::string& id) { return registry.sources.count(id) != 0; };
  for (const auto& [profile, keys] : registry.profiles) {
    const std::string path = (std::filesystem::path(registry.topologies_dir) / profile).string();
    const std::vector<std::string> present = profile_value_keys(path);
    for (const std::string& key : present) {
      if (keys.count(key) == 0) {
        problems.push_back(
            fmt::format("{}: {} names no source for {}", registry.file, profile, key));
      }
    }
    for (const auto& [key, ids] : keys) {
      if (std::find(present.begin(), present.end(), key) == present.end()) {
        problems.push_back(fmt::format("{}: {} has no value {} (a source entry for nothing)",
                                       registry.file, profile, key));
      }
      for (const std::string& id : ids) {
        if (!declared(id)) {
          problems.push_back(
              fmt::format("{}: {} {} cites undeclared source {}", registry.file, profile, key, id));
        }
      }
    }
  }
  const std::set<std::string> fitted = registry.fitted_ids();
  for (const PublishedCase& c : cases) {
    if (!declared(c.source_id)) {
      problems.push_back(fmt::format("{}: source id {} is not declared in {}", c.file, c.source_id,
                                     registry.file));
    }
    const bool used = fitted.count(c.source_id) != 0;
    if (c.role == CaseRole::held_out && used) {
      problems.push_back(
          fmt::format("{}: held-out case cites {}, which a profile value was fitted from", c.file,
                      c.source_id));
    }
    if (c.role == CaseRole::fit && !used) {
      problems.push_back(fmt::format(
          "{}: fit case cites {}, from which no profile value was fitted (role held-out?)", c.file,
          c.source_id));
    }
  }
  return problems;
}

}  // namespace tilesim::validation
