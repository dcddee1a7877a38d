#include "sim/core/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"

namespace tilesim {

int line_of(const YAML::Node& node) {
  const auto mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

YAML::Node load_yaml_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, 0, "", "is a directory; expected a YAML file");
  }
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw InputError(path, 0, "", "cannot open file");
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, "", fmt::format("malformed YAML: {}", e.msg));
  }
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    throw InputError(file_, tilesim::line_of(node_), path_.empty() ? "<document>" : path_,
                     "expected a mapping of key: value");
  }
  // yaml-cpp keeps both entries of a repeated key and node[key] returns the first, so a
  // repeated key would silently ignore the later value.
  std::vector<std::pair<std::string, int>> seen;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) continue;  // key_text reports these where they are read
    const std::string key = kv.first.Scalar();
    const auto first = std::find_if(seen.begin(), seen.end(),
                                    [&](const auto& entry) { return entry.first == key; });
    if (first != seen.end()) {
      throw InputError(file_, tilesim::line_of(kv.first), key_path(key),
                       fmt::format("each key once; it is already set at line {}", first->second));
    }
    seen.emplace_back(key, tilesim::line_of(kv.first));
  }
}

std::string YamlMap::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

int YamlMap::line() const { return tilesim::line_of(node_); }

int YamlMap::line_of_key(std::string_view key) const {
  for (const auto& kv : node_) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return tilesim::line_of(kv.second);
  }
  return line();
}

void YamlMap::fail(std::string_view key, const std::string& expected) const {
  throw InputError(file_, line_of_key(key), key_path(key), expected);
}

std::string YamlMap::key_text(const YAML::Node& key) const {
  if (!key.IsScalar()) {
    throw InputError(file_, tilesim::line_of(key), path_.empty() ? "<document>" : path_,
                     "expected plain keys, found a key that is a list or mapping");
  }
  return key.Scalar();
}

std::vector<std::string> YamlMap::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(key_text(kv.first));
  return out;
}

void YamlMap::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& kv : node_) {
    const auto key = key_text(kv.first);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      throw InputError(file_, tilesim::line_of(kv.first), key_path(key),
                       fmt::format("unknown key; expected one of: {}", list));
    }
  }
}

bool YamlMap::has(std::string_view key) const { return static_cast<bool>(node_[std::string(key)]); }

YAML::Node YamlMap::node(std::string_view key) const {
  YAML::Node n = node_[std::string(key)];
  if (!n) throw InputError(file_, line(), key_path(key), "missing required key");
  return n;
}

YamlMap YamlMap::map(std::string_view key) const {
  return YamlMap(node(key), file_, key_path(key));
}

std::optional<YamlMap> YamlMap::optional_map(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return map(key);
}

namespace {
std::string scalar_of(const YamlMap& m, std::string_view key, const char* expected) {
  YAML::Node n = m.node(key);
  if (!n.IsScalar()) m.fail(key, fmt::format("expected {}", expected));
  return n.Scalar();
}

template <typename T, typename Parser>
T parse_scalar(const YamlMap& m, std::string_view key, Parser parse, const char* expected) {
  const std::string text = scalar_of(m, key, expected);
  auto value = parse(text);
  if (!value) m.fail(key, fmt::format("expected {}, got '{}'", expected, text));
  return *value;
}
}  // namespace

std::string YamlMap::string(std::string_view key) const {
  return scalar_of(*this, key, "a string");
}

std::int64_t YamlMap::integer(std::string_view key) const {
  return parse_scalar<std::int64_t>(
      *this, key,
      [](const std::string& s) -> std::optional<std::int64_t> {
        auto t = parse_tokens(s);  // plain integer or K/M/G multiple
        return t;
      },
      "a non-negative integer");
}

double YamlMap::number(std::string_view key) const {
  return parse_scalar<double>(
      *this, key,
      [](const std::string& s) -> std::optional<double> {
        try {
          std::size_t used = 0;
          double v = std::stod(s, &used);
          if (used != s.size()) return std::nullopt;
          return v;
        } catch (...) {
          return std::nullopt;
        }
      },
      "a number");
}

bool YamlMap::boolean(std::string_view key) const {
  return parse_scalar<bool>(
      *this, key,
      [](const std::string& s) -> std::optional<bool> {
        if (s == "true") return true;
        if (s == "false") return false;
        return std::nullopt;
      },
      "true or false");
}

std::int64_t YamlMap::tokens(std::string_view key) const {
  return parse_scalar<std::int64_t>(
      *this, key, [](const std::string& s) { return parse_tokens(s); },
      "a token count such as 4096, 256K or 1M");
}

double YamlMap::bytes(std::string_view key) const {
  return parse_scalar<double>(
      *this, key, [](const std::string& s) { return parse_bytes(s); },
      "a size such as 80GiB, 512MiB or 4096");
}

double YamlMap::bandwidth_bytes_per_s(std::string_view key) const {
  return parse_scalar<double>(
      *this, key, [](const std::string& s) { return parse_bandwidth_bytes_per_s(s); },
      "a bandwidth such as 450GB/s or 400Gb/s");
}

double YamlMap::time_s(std::string_view key) const {
  return parse_scalar<double>(
      *this, key, [](const std::string& s) { return parse_time_s(s); },
      "a time such as 2us, 1.5ms or 500ns");
}

double YamlMap::flop_rate(std::string_view key) const {
  return parse_scalar<double>(
      *this, key, [](const std::string& s) { return parse_flop_rate(s); },
      "a rate such as 989TFLOP/s");
}

std::string YamlMap::choice(std::string_view key,
                            std::initializer_list<std::string_view> choices) const {
  const std::string value = string(key);
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    std::string list;
    for (auto c : choices) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
    fail(key, fmt::format("expected one of {}, got '{}'", list, value));
  }
  return value;
}

}  // namespace tilesim
