#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace tilesim {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "1.5ms" into 1.5 and "ms". The number must be finite and non-negative.
std::optional<std::pair<double, std::string_view>> split_number(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double value = 0.0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  if (!std::isfinite(value) || value < 0.0) return std::nullopt;
  std::string_view rest = trim(text.substr(static_cast<std::size_t>(end - text.data())));
  return std::make_pair(value, rest);
}

template <std::size_t N>
std::optional<double> parse_with(std::string_view text, const std::array<Suffix, N>& table,
                                 bool allow_bare) {
  auto parts = split_number(text);
  if (!parts) return std::nullopt;
  auto [value, suffix] = *parts;
  if (suffix.empty()) {
    if (!allow_bare) return std::nullopt;
    return value;
  }
  for (const auto& s : table) {
    if (suffix != s.text) continue;
    const double scaled = value * s.factor;
    if (!std::isfinite(scaled)) return std::nullopt;
    return scaled;
  }
  return std::nullopt;
}

constexpr double kKi = 1024.0;

constexpr const char* kRangeAdvice =
    "check attention.seq_len and batch, the calibration's peak and launch_overhead, and the "
    "topology's bandwidths and latencies";

}  // namespace

SimulatedRangeError::SimulatedRangeError(const std::string& what) : std::range_error(what) {}

Picoseconds s_to_ps(double seconds) {
  if (!(seconds > 0.0)) return 0;
  if (!(seconds * 1e12 < static_cast<double>(kSimulatedRangePs))) {
    throw SimulatedRangeError(
        fmt::format("a duration of {:.3g} s is beyond the simulator's range (~104 days); {}",
                    seconds, kRangeAdvice));
  }
  return static_cast<Picoseconds>(std::llround(seconds * 1e12));
}

Picoseconds transfer_ps(double bytes, double bytes_per_s) {
  if (bytes <= 0.0) return 0;
  const double ps = std::ceil(bytes / bytes_per_s * 1e12 - 1e-6);
  if (!(ps < static_cast<double>(kSimulatedRangePs))) {
    throw SimulatedRangeError(
        fmt::format("moving {:.3g} bytes takes beyond the simulator's range (~104 days); {}", bytes,
                    kRangeAdvice));
  }
  return static_cast<Picoseconds>(ps);
}

Picoseconds later_ps(Picoseconds now_ps, Picoseconds delay_ps) {
  assert(delay_ps >= 0);
  if (delay_ps > kSimulatedRangePs - now_ps) {
    throw SimulatedRangeError(fmt::format(
        "the simulated timeline passes the simulator's range (~104 days); {}", kRangeAdvice));
  }
  return now_ps + delay_ps;
}

Picoseconds later_ps(Picoseconds now_ps, double delay_ps) {
  const double rounded = std::ceil(std::max(delay_ps, 0.0));
  if (!(rounded < static_cast<double>(kSimulatedRangePs))) {
    throw SimulatedRangeError(fmt::format(
        "the simulated timeline passes the simulator's range (~104 days); {}", kRangeAdvice));
  }
  return later_ps(now_ps, static_cast<Picoseconds>(rounded));
}

std::optional<std::int64_t> parse_tokens(std::string_view text) {
  static constexpr std::array<Suffix, 3> table{
      {{"K", kKi}, {"M", kKi * kKi}, {"G", kKi * kKi * kKi}}};
  auto value = parse_with(text, table, true);
  if (!value || *value != std::floor(*value) || *value > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

std::optional<double> parse_bytes(std::string_view text) {
  static constexpr std::array<Suffix, 9> table{{{"B", 1.0},
                                                {"KiB", kKi},
                                                {"MiB", kKi * kKi},
                                                {"GiB", kKi * kKi * kKi},
                                                {"TiB", kKi * kKi * kKi * kKi},
                                                {"KB", 1e3},
                                                {"MB", 1e6},
                                                {"GB", 1e9},
                                                {"TB", 1e12}}};
  return parse_with(text, table, true);
}

std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text) {
  static constexpr std::array<Suffix, 12> table{{{"B/s", 1.0},
                                                 {"KB/s", 1e3},
                                                 {"MB/s", 1e6},
                                                 {"GB/s", 1e9},
                                                 {"TB/s", 1e12},
                                                 {"KiB/s", kKi},
                                                 {"MiB/s", kKi * kKi},
                                                 {"GiB/s", kKi * kKi * kKi},
                                                 {"Kb/s", 1e3 / 8},
                                                 {"Mb/s", 1e6 / 8},
                                                 {"Gb/s", 1e9 / 8},
                                                 {"Tb/s", 1e12 / 8}}};
  return parse_with(text, table, false);
}

std::optional<double> parse_time_s(std::string_view text) {
  static constexpr std::array<Suffix, 6> table{
      {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}, {"min", 60.0}}};
  return parse_with(text, table, false);
}

std::optional<double> parse_flop_rate(std::string_view text) {
  static constexpr std::array<Suffix, 4> table{
      {{"FLOP/s", 1.0}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}}};
  return parse_with(text, table, true);
}

std::string format_bytes(double bytes) {
  static constexpr std::array<std::string_view, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t i = 0;
  while (i + 1 < names.size() && std::fabs(bytes) >= 1024.0) {
    bytes /= 1024.0;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.2f} {}", bytes, names[i]);
}

std::string format_time_s(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 1.0) return fmt::format("{:.3f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", seconds * 1e3);
  if (a >= 1e-6) return fmt::format("{:.3f} us", seconds * 1e6);
  return fmt::format("{:.1f} ns", seconds * 1e9);
}

std::string format_bandwidth(double bytes_per_s) {
  if (bytes_per_s >= 1e12) return fmt::format("{:.2f} TB/s", bytes_per_s / 1e12);
  if (bytes_per_s >= 1e9) return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
  return fmt::format("{:.1f} MB/s", bytes_per_s / 1e6);
}

std::string format_tokens(std::int64_t tokens) {
  const auto k = static_cast<std::int64_t>(1024);
  if (tokens >= k * k && tokens % (k * k) == 0) return fmt::format("{}M", tokens / (k * k));
  if (tokens >= k && tokens % k == 0) return fmt::format("{}K", tokens / k);
  return fmt::format("{}", tokens);
}

}  // namespace tilesim
