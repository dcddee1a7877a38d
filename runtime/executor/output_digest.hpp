// A fingerprint of a run's outputs, to show that the same seed gives identical outputs: a
// 64-bit FNV-1a hash of each output object's fp32 bytes, combined in object-id order
// (so the digest does not depend on which rank owns what).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

class OutputDigest {
 public:
  explicit OutputDigest(const Plan& plan);
  void add(int object, std::span<const float> data);
  // One entry per object (0 where this rank added nothing), as int64 for the gather.
  std::vector<std::int64_t> values() const;
  // Combines every rank's values() into a 16-hex-digit string.
  static std::string combine(const std::vector<std::vector<std::int64_t>>& ranks);

 private:
  std::vector<std::int64_t> hashes_;
};

}  // namespace tilesim::runtime
