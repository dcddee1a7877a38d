#include "runtime/executor/output_digest.hpp"

#include <fmt/format.h>

#include <cstring>

#include "sim/core/fnv1a.hpp"

namespace tilesim::runtime {

OutputDigest::OutputDigest(const Plan& plan) : hashes_(plan.objects.size(), 0) {}

void OutputDigest::add(int object, std::span<const float> data) {
  Fnv1a fnv;
  fnv.add_bytes(reinterpret_cast<const unsigned char*>(data.data()), data.size_bytes());
  const std::uint64_t h = fnv.value();
  std::int64_t value = 0;
  std::memcpy(&value, &h, sizeof value);
  hashes_.at(static_cast<std::size_t>(object)) = value;
}

std::vector<std::int64_t> OutputDigest::values() const { return hashes_; }

std::string OutputDigest::combine(const std::vector<std::vector<std::int64_t>>& ranks) {
  Fnv1a fnv;
  const std::size_t n = ranks.empty() ? 0 : ranks.front().size();
  for (std::size_t obj = 0; obj < n; ++obj) {
    std::int64_t v = 0;
    for (const auto& r : ranks) v ^= r.at(obj);
    fnv.add(v);
  }
  return fmt::format("{:016x}", fnv.value());
}

}  // namespace tilesim::runtime
