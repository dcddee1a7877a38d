// Strict, typed access to YAML mappings with error messages that name the file,
// the line and the full key path (for example "attention.seq_len").
//
// Every reader of user YAML (topologies, scenarios, calibration profiles) goes
// through YamlMap so that an unknown key, a missing key or a value in the wrong
// unit is an InputError, never a silent default.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilesim {

// Loads a YAML file; a syntax error becomes an InputError naming file and line.
YAML::Node load_yaml_file(const std::string& path);

class YamlMap {
 public:
  // `path` is the key path of this mapping ("" at the document root).
  YamlMap(YAML::Node node, std::string file, std::string path);

  // Throws unless every key of the mapping is one of `allowed`.
  void allow_only(std::initializer_list<std::string_view> allowed) const;

  bool has(std::string_view key) const;
  YAML::Node node(std::string_view key) const;  // required; throws when missing
  YamlMap map(std::string_view key) const;      // required sub-mapping
  std::optional<YamlMap> optional_map(std::string_view key) const;

  std::string string(std::string_view key) const;
  std::int64_t integer(std::string_view key) const;
  double number(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::int64_t tokens(std::string_view key) const;
  double bytes(std::string_view key) const;
  double bandwidth_bytes_per_s(std::string_view key) const;
  double time_s(std::string_view key) const;
  double flop_rate(std::string_view key) const;

  // A value must be one of `choices`.
  std::string choice(std::string_view key, std::initializer_list<std::string_view> choices) const;

  const YAML::Node& raw() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  int line() const;  // 1-based line of this mapping
  int line_of_key(std::string_view key) const;
  std::string key_path(std::string_view key) const;
  std::vector<std::string> keys() const;  // in document order

  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;
  // A key's text; a key that is a list or mapping is an InputError.
  std::string key_text(const YAML::Node& key) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

// 1-based line of a node, 0 when yaml-cpp has no mark for it.
int line_of(const YAML::Node& node);

}  // namespace tilesim
