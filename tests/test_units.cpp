#include <catch2/catch.hpp>

#include "sim/core/units.hpp"

using namespace tilesim;

TEST_CASE("token counts use power-of-two suffixes") {
  CHECK(parse_tokens("256K") == 262144);
  CHECK(parse_tokens("1M") == 1048576);
  CHECK(parse_tokens("4096") == 4096);
  CHECK_FALSE(parse_tokens("1.5"));
  CHECK_FALSE(parse_tokens("12 apples"));
  CHECK_FALSE(parse_tokens(""));
}

TEST_CASE("byte sizes distinguish binary and decimal prefixes") {
  CHECK(*parse_bytes("60GiB") == 60.0 * 1024 * 1024 * 1024);
  CHECK(*parse_bytes("80GB") == 80e9);
  CHECK(*parse_bytes("512") == 512.0);
  CHECK_FALSE(parse_bytes("12 parsecs"));
  CHECK_FALSE(parse_bytes("-1GiB"));
}

TEST_CASE("bandwidths accept bytes and bits per second") {
  CHECK(*parse_bandwidth_bytes_per_s("450GB/s") == 450e9);
  CHECK(*parse_bandwidth_bytes_per_s("400Gb/s") == 50e9);
  CHECK_FALSE(parse_bandwidth_bytes_per_s("450"));  // a bare number has no unit
  CHECK_FALSE(parse_bandwidth_bytes_per_s("450GB"));
}

TEST_CASE("times parse to seconds and convert to whole picoseconds") {
  CHECK(*parse_time_s("2us") == Approx(2e-6));
  CHECK(*parse_time_s("1.5ms") == Approx(1.5e-3));
  CHECK_FALSE(parse_time_s("2"));
  CHECK(s_to_ps(2e-6) == 2'000'000);
  // 1 MB at 1 GB/s is exactly 1 ms.
  CHECK(transfer_ps(1e6, 1e9) == 1'000'000'000);
  // A transfer that does not divide evenly rounds up.
  CHECK(transfer_ps(1.0, 3e12) == 1);
}

TEST_CASE("flop rates") {
  CHECK(*parse_flop_rate("989TFLOP/s") == 989e12);
  CHECK(*parse_flop_rate("312e12") == 312e12);
}

TEST_CASE("later_ps adds inside the simulator's range and refuses to wrap past it") {
  CHECK(later_ps(Picoseconds{5}, Picoseconds{7}) == 12);
  CHECK(later_ps(Picoseconds{5}, 2.2) == 8);   // a fractional delay rounds up
  CHECK(later_ps(Picoseconds{5}, -3.0) == 5);  // rounding noise below 0 is no delay
  CHECK(later_ps(kSimulatedRangePs - 10, Picoseconds{10}) == kSimulatedRangePs);
  CHECK_THROWS_AS(later_ps(kSimulatedRangePs - 10, Picoseconds{11}), SimulatedRangeError);
  // A delay beyond int64 must not be cast first (it would wrap to a negative time).
  CHECK_THROWS_AS(later_ps(Picoseconds{0}, 1e30), SimulatedRangeError);
  CHECK_THROWS_AS(s_to_ps(1e8), SimulatedRangeError);  // 3 years of simulated time
}
