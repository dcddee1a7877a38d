// The reference kernels against first principles: closed forms and central finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "kernels/cpu/reference_attention.hpp"
#include "test_kernels_support.hpp"

namespace tk = tilesim::kernels;
using tk::testing::random_floats;
using tk::testing::to_double;

namespace {

struct Problem {
  tk::BlockShape shape;
  tk::PositionMask mask;
  std::vector<double> q, k, v, w;  // w: weights of the scalar loss sum(O * W)
};

Problem make_problem(const tk::BlockShape& s, const tk::PositionMask& m, std::uint32_t seed) {
  return Problem{s,
                 m,
                 to_double(random_floats(s.q_elements(), seed)),
                 to_double(random_floats(s.kv_elements(), seed + 1)),
                 to_double(random_floats(s.kv_elements(), seed + 2)),
                 to_double(random_floats(s.q_elements(), seed + 3))};
}

struct Forward {
  std::vector<double> o, lse;
};

Forward forward(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                const std::vector<double>& v) {
  Forward f{std::vector<double>(q.size()),
            std::vector<double>(static_cast<std::size_t>(p.shape.lse_elements()))};
  tk::reference_forward(p.shape, p.mask, q, k, v, f.o, f.lse);
  return f;
}

double loss(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v) {
  const Forward f = forward(p, q, k, v);
  double sum = 0.0;
  for (std::size_t i = 0; i < f.o.size(); ++i) sum += f.o[i] * p.w[i];
  return sum;
}

// Central finite difference of the loss with respect to every element of `x`.
std::vector<double> numeric_gradient(std::vector<double>& x, const std::function<double()>& eval) {
  constexpr double kStep = 1e-5;
  std::vector<double> grad(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = eval();
    x[i] = saved - kStep;
    const double down = eval();
    x[i] = saved;
    grad[i] = (up - down) / (2.0 * kStep);
  }
  return grad;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

void check_backward_against_fd(Problem p) {
  const Forward f = forward(p, p.q, p.k, p.v);
  std::vector<double> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
  tk::reference_backward(p.shape, p.mask, p.q, p.k, p.v, f.o, p.w, f.lse, dq, dk, dv);
  auto eval = [&] { return loss(p, p.q, p.k, p.v); };
  CHECK(max_abs_diff(dq, numeric_gradient(p.q, eval)) < 1e-5);
  CHECK(max_abs_diff(dk, numeric_gradient(p.k, eval)) < 1e-5);
  CHECK(max_abs_diff(dv, numeric_gradient(p.v, eval)) < 1e-5);
}

}  // namespace

TEST_CASE("kernels: reference forward: one visible key gives o = v and lse = score", "[kernels]") {
  const tk::BlockShape s{1, 1, 1, 4, 1, 3};
  // Query at position 0 sees only the key at position 0 (keys at 0, 5, 10).
  const tk::PositionMask m{tk::MaskKind::causal, {0, 1}, {0, 5}};
  const std::vector<double> q{1, 2, 3, 4};
  std::vector<double> k(12), v(12);
  for (std::size_t i = 0; i < 12; ++i) {
    k[i] = 0.1 * static_cast<double>(i);
    v[i] = static_cast<double>(i);
  }
  std::vector<double> o(4), lse(1);
  tk::reference_forward(s, m, q, k, v, o, lse);
  CHECK(o == std::vector<double>{0, 1, 2, 3});
  CHECK(lse[0] == Approx((0.0 * 1 + 0.1 * 2 + 0.2 * 3 + 0.3 * 4) / 2.0).epsilon(1e-12));
}

TEST_CASE("kernels: reference forward: rows that see no key have o = 0, lse = -inf", "[kernels]") {
  const tk::BlockShape s{2, 2, 1, 4, 3, 5};
  const tk::PositionMask m{tk::MaskKind::causal, {0, 1}, {100, 1}};
  std::vector<double> o(static_cast<std::size_t>(s.q_elements()), 7.0);
  std::vector<double> lse(static_cast<std::size_t>(s.lse_elements()), 7.0);
  const auto q = to_double(random_floats(s.q_elements(), 1));
  const auto kv = to_double(random_floats(s.kv_elements(), 2));
  tk::reference_forward(s, m, q, kv, kv, o, lse);
  for (double x : o) CHECK(x == 0.0);
  for (double x : lse) CHECK(x == -std::numeric_limits<double>::infinity());
}

TEST_CASE("kernels: reference backward equals central finite differences", "[kernels]") {
  SECTION("full mask, MHA") { check_backward_against_fd(make_problem({1, 2, 2, 4, 3, 5}, {}, 11)); }
  SECTION("causal by positions, GQA 4:2, a fully masked row") {
    // Queries at 3, 5, 7, 9; keys at 4, 5, 6, 7, 8, 9: the query at 3 sees nothing.
    check_backward_against_fd(
        make_problem({2, 4, 2, 3, 4, 6}, {tk::MaskKind::causal, {3, 2}, {4, 1}}, 21));
  }
  SECTION("striped causal") {
    check_backward_against_fd(
        make_problem({1, 2, 1, 4, 5, 5}, {tk::MaskKind::causal, {1, 3}, {0, 3}}, 31));
  }
}

TEST_CASE(
    "kernels: reference backward over two KV blocks with the merged row LSE sums to the gradient",
    "[kernels]") {
  // Keys split into blocks [0, 3) and [3, 7); positions contiguous, causal.
  const tk::BlockShape whole{1, 2, 1, 4, 5, 7};
  const tk::PositionMask whole_mask{tk::MaskKind::causal, {2, 1}, {0, 1}};
  Problem p = make_problem(whole, whole_mask, 41);
  const Forward f = forward(p, p.q, p.k, p.v);
  const std::int64_t row = whole.kv_heads * whole.head_dim;
  std::vector<double> dq(p.q.size()), dk(p.k.size()), dv(p.v.size());
  for (auto [first, last] : {std::pair<std::int64_t, std::int64_t>{0, 3}, {3, 7}}) {
    tk::BlockShape s = whole;
    s.kv_tokens = last - first;
    const tk::PositionMask m{tk::MaskKind::causal, {2, 1}, {first, 1}};
    const auto k = tk::testing::slice_tokens(p.k, 1, 7, row, first, last);
    const auto v = tk::testing::slice_tokens(p.v, 1, 7, row, first, last);
    std::vector<double> dk_part(k.size()), dv_part(v.size());
    tk::reference_backward(s, m, p.q, k, v, f.o, p.w, f.lse, dq, dk_part, dv_part);
    tk::testing::add_tokens(dk, dk_part, 1, 7, row, first, last);
    tk::testing::add_tokens(dv, dv_part, 1, 7, row, first, last);
  }
  auto eval = [&] { return loss(p, p.q, p.k, p.v); };
  CHECK(max_abs_diff(dq, numeric_gradient(p.q, eval)) < 1e-5);
  CHECK(max_abs_diff(dk, numeric_gradient(p.k, eval)) < 1e-5);
  CHECK(max_abs_diff(dv, numeric_gradient(p.v, eval)) < 1e-5);
}
