#include "runtime/output_digest.hpp"

#include <fmt/format.h>

#include <cstring>

namespace tilesim::runtime {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

std::uint64_t fnv(std::uint64_t h, const unsigned char* bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= kFnvPrime;
  }
  return h;
}

}  // namespace

OutputDigest::OutputDigest(const Plan& plan) : hashes_(plan.objects.size(), 0) {}

void OutputDigest::add(int object, std::span<const float> data) {
  std::uint64_t h =
      fnv(kFnvOffset, reinterpret_cast<const unsigned char*>(data.data()), data.size_bytes());
  std::int64_t value = 0;
  std::memcpy(&value, &h, sizeof value);
  hashes_.at(static_cast<std::size_t>(object)) = value;
}

std::vector<std::int64_t> OutputDigest::values() const { return hashes_; }

std::string OutputDigest::combine(const std::vector<std::vector<std::int64_t>>& ranks) {
  std::uint64_t h = kFnvOffset;
  const std::size_t n = ranks.empty() ? 0 : ranks.front().size();
  for (std::size_t obj = 0; obj < n; ++obj) {
    std::int64_t v = 0;
    for (const auto& r : ranks) v ^= r.at(obj);
    h = fnv(h, reinterpret_cast<const unsigned char*>(&v), sizeof v);
  }
  return fmt::format("{:016x}", h);
}

}  // namespace tilesim::runtime
