// Units used across tilesim and the parsers for the human forms in YAML files.
//
// Time is integer picoseconds (int64: ~106 days of range), so that event order and
// results are exact and deterministic. Rates are doubles in SI units (bytes/s,
// FLOP/s); a duration derived from a rate is rounded up to the next picosecond.
//
// Accepted forms (case-sensitive suffixes):
//   tokens     "256K" "1M" "4096"           K/M/G are powers of two (1K = 1024)
//   bytes      "60GiB" "1.5MiB" "80GB" "512" KiB/MiB/GiB/TiB are 2^10.., KB/MB/GB/TB 10^3..
//   bandwidth  "450GB/s" "400Gb/s" "25GiB/s" B = bytes, b = bits
//   time       "2us" "1.5ms" "500ns" "3ps" "1s"
//   flop rate  "989TFLOP/s" "312e12"
// Parsers return std::nullopt on a malformed value; callers turn that into an
// InputError that names the file, line and key.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tilesim {

using Picoseconds = std::int64_t;

inline constexpr Picoseconds kPsPerSecond = 1'000'000'000'000;

constexpr double ps_to_s(Picoseconds ps) { return static_cast<double>(ps) / 1e12; }
// Rounds to the nearest picosecond; negative inputs clamp to zero.
Picoseconds s_to_ps(double seconds);
// Time to move `bytes` at `bytes_per_s`, rounded up to whole picoseconds.
Picoseconds transfer_ps(double bytes, double bytes_per_s);

// The simulator's time range: 9e18 ps (~104 days of simulated time) in 64 bits.
inline constexpr Picoseconds kSimulatedRangePs = 9'000'000'000'000'000'000;
// now + delay, throwing SimulatedRangeError when the sum leaves the range (a 2G-token
// sequence, a bandwidth of 1e-300 B/s: inputs no real run has), never wrapping around.
// `delay_ps` >= 0 (a negative delay is a caller's bug).
Picoseconds later_ps(Picoseconds now_ps, Picoseconds delay_ps);
// The same for a delay still in floating point (rounded up), checked before the cast: a
// double past the int64 range would otherwise convert to garbage.
Picoseconds later_ps(Picoseconds now_ps, double delay_ps);

// Simulated time beyond kSimulatedRangePs. The CLI reports it as bad input (exit 2): only
// absurd sizes, bandwidths or calibration values get there.
class SimulatedRangeError : public std::range_error {
 public:
  explicit SimulatedRangeError(const std::string& what);
};

std::optional<std::int64_t> parse_tokens(std::string_view text);
std::optional<double> parse_bytes(std::string_view text);
std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text);
std::optional<double> parse_time_s(std::string_view text);
std::optional<double> parse_flop_rate(std::string_view text);

// Human-readable forms for tables ("1.50 GiB", "2.00 ms", "450 GB/s").
std::string format_bytes(double bytes);
std::string format_time_s(double seconds);
std::string format_bandwidth(double bytes_per_s);
std::string format_tokens(std::int64_t tokens);

}  // namespace tilesim
