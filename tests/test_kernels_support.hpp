// Helpers shared by the attention kernel tests: seeded random tensors, conversions, slicing and
// error measures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels::testing {

inline std::vector<float> random_floats(std::int64_t n, std::uint32_t seed, float lo = -1.0F,
                                        float hi = 1.0F) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(static_cast<std::size_t>(n));
  for (float& x : out) x = dist(gen);
  return out;
}

inline std::vector<double> to_double(std::span<const float> in) {
  return std::vector<double>(in.begin(), in.end());
}

// Largest |a - b| over the elements, scaled by max(1, max |b|): a relative error of the tensor.
template <typename A, typename B>
double relative_error(const std::vector<A>& a, const std::vector<B>& b) {
  double worst = 0.0;
  double scale = 1.0;
  for (std::size_t i = 0; i < b.size(); ++i) scale = std::max(scale, std::abs(double(b[i])));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = double(a[i]);
    const double y = double(b[i]);
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::abs(x - y));
  }
  return worst / scale;
}

// Tokens [first, last) of a tensor laid out [batch][tokens][row_elements].
template <typename T>
std::vector<T> slice_tokens(const std::vector<T>& in, std::int64_t batch, std::int64_t tokens,
                            std::int64_t row_elements, std::int64_t first, std::int64_t last) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(batch * (last - first) * row_elements));
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto begin = in.begin() + (b * tokens + first) * row_elements;
    out.insert(out.end(), begin, begin + (last - first) * row_elements);
  }
  return out;
}

// Adds the tokens of `part` ([batch][last-first][row_elements]) into tokens [first, last) of
// `whole` ([batch][tokens][row_elements]).
template <typename T>
void add_tokens(std::vector<T>& whole, const std::vector<T>& part, std::int64_t batch,
                std::int64_t tokens, std::int64_t row_elements, std::int64_t first,
                std::int64_t last) {
  const std::int64_t n = (last - first) * row_elements;
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t e = 0; e < n; ++e) {
      whole[static_cast<std::size_t>((b * tokens + first) * row_elements + e)] +=
          part[static_cast<std::size_t>(b * n + e)];
    }
  }
}

}  // namespace tilesim::kernels::testing
