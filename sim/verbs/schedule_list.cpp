#include "sim/verbs/schedule_list.hpp"

#include <fmt/format.h>

#include <sstream>
#include <string_view>

#include "sim/core/input_error.hpp"

namespace tilesim {
namespace {

bool known_kind(const std::string& kind) {
  for (const char* k : kScheduleKinds) {
    if (kind == k) return true;
  }
  return false;
}

[[noreturn]] void bad(const std::string& entry, const std::string& why) {
  std::string kinds;
  for (const char* k : kScheduleKinds) kinds += fmt::format("{}{}", kinds.empty() ? "" : ", ", k);
  throw InputError("--schedules", 0, "--schedules",
                   fmt::format("'{}': {}; expected all, one of {}, mesh:AxB[/placement], "
                               "mesh:auto, usp:U or double_ring:K",
                               entry, why, kinds));
}

// "AxB" -> (A, B); B = 0 when only "A" is given.
std::pair<int, int> parse_pair(const std::string& entry, const std::string& text) {
  const auto x = text.find('x');
  try {
    std::size_t used = 0;
    const int first = std::stoi(text.substr(0, x), &used);
    if (used != (x == std::string::npos ? text.size() : x) || first < 1) bad(entry, "bad number");
    if (x == std::string::npos) return {first, 0};
    const std::string rest = text.substr(x + 1);
    const int second = std::stoi(rest, &used);
    if (used != rest.size() || second < 1) bad(entry, "bad number");
    return {first, second};
  } catch (const std::logic_error&) {
    bad(entry, "bad number");
  }
}

}  // namespace

std::vector<ScheduleCandidate> parse_schedule_list(const std::string& text,
                                                   const ScheduleSpec& base) {
  std::vector<ScheduleCandidate> out;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    if (entry.empty()) continue;
    if (entry == "all") {
      for (const char* k : kScheduleKinds) {
        ScheduleSpec spec = base;
        spec.kind = k;
        if (std::string_view(k) != "ring" && std::string_view(k) != "allgather_kv") {
          spec.balance = TokenBalance::layout;
        }
        const bool mesh = std::string_view(k) == "mesh";
        if (mesh) spec.tile_choice = MeshTileChoice::fastest;
        out.push_back({mesh ? "mesh:auto" : k, spec});
      }
      continue;
    }
    const auto colon = entry.find(':');
    const std::string kind = entry.substr(0, colon);
    if (!known_kind(kind)) bad(entry, "unknown schedule kind");
    ScheduleSpec spec = base;
    spec.kind = kind;
    const bool balances = kind == "ring" || kind == "allgather_kv";
    if (!balances) spec.balance = TokenBalance::layout;  // balance applies to these two only
    if (colon == std::string::npos) {
      if (kind == "mesh" && (spec.tile_a == 0 || base.kind != "mesh")) {
        spec.tile_choice = MeshTileChoice::fastest;
      }
      out.push_back({entry, spec});
      continue;
    }
    const std::string arg = entry.substr(colon + 1);
    // tune's labels name the degree with a prefix (usp:u8, double_ring:inner8).
    const auto without = [&](std::string_view prefix) {
      return arg.starts_with(prefix) ? arg.substr(prefix.size()) : arg;
    };
    if (kind == "mesh") {
      if (arg == "auto") {
        spec.tile_choice = MeshTileChoice::fastest;
      } else if (arg == "min-bytes") {
        spec.tile_choice = MeshTileChoice::min_bytes;
      } else {
        const auto slash = arg.find('/');  // mesh:AxB/placement, as tune names its tiles
        const auto [a, b] = parse_pair(entry, arg.substr(0, slash));
        if (b == 0) bad(entry, "expected mesh:AxB");
        spec.tile_a = a;
        spec.tile_b = b;
        spec.tile_choice = MeshTileChoice::given;
        if (slash != std::string::npos) {
          const std::string placement = arg.substr(slash + 1);
          if (placement != "node-major" && placement != "kv-group-major") {
            bad(entry, "a mesh placement is node-major or kv-group-major");
          }
          spec.placement = placement;
        }
      }
    } else if (kind == "usp") {
      spec.ulysses_degree = parse_pair(entry, without("u")).first;
    } else if (kind == "double_ring") {
      const auto [inner, rest] = parse_pair(entry, without("inner"));
      if (rest != 0) bad(entry, "expected double_ring:K (K ranks per inner ring)");
      spec.inner_ring = inner;
    } else if (balances && (arg == "work" || arg == "layout")) {
      spec.balance = arg == "work" ? TokenBalance::work : TokenBalance::layout;
    } else {
      bad(entry,
          "only mesh, usp, double_ring, ring:work|layout and allgather_kv:work|layout take a "
          "parameter");
    }
    out.push_back({entry, spec});
  }
  if (out.empty()) bad(text, "no schedules given");
  return out;
}

}  // namespace tilesim
