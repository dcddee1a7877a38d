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
