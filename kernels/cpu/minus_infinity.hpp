#pragma once
// -infinity in the precision a kernel computes in: the start of a running row maximum and the
// log-sum-exp of a row that sees no key. One definition for every CPU kernel, so that the
// kernels can share a translation unit (unity builds).
#include <limits>

namespace tilesim::kernels {

template <typename Real>
inline constexpr Real kMinusInfinity = -std::numeric_limits<Real>::infinity();

}  // namespace tilesim::kernels
