// The fp32 CPU fast path against the double reference on seeded random blocks.
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/reference_attention.hpp"
#include "test_kernels_support.hpp"

namespace tk = tilesim::kernels;
using tk::testing::random_floats;
using tk::testing::relative_error;
using tk::testing::to_double;

namespace {

struct Case {
  std::string name;
  tk::BlockShape shape;
  tk::PositionMask mask;
};

// Packed documents starting at these positions (static: a PositionMask does not own them).
constexpr std::int64_t kDocumentStarts[] = {0, 5, 20, 21, 60};

std::vector<Case> cases() {
  using tk::MaskKind;
  return {
      {"window 9 diagonal 40x40", {1, 2, 1, 32, 40, 40}, {MaskKind::causal, {0, 1}, {0, 1}, 9}},
      {"window 12, keys before queries 30x50",
       {1, 2, 2, 16, 30, 50},
       {MaskKind::causal, {50, 1}, {10, 1}, 12}},
      {"window 11 striped P=4", {1, 4, 2, 32, 40, 40}, {MaskKind::causal, {1, 4}, {2, 4}, 11}},
      {"documents diagonal 64x64",
       {1, 2, 1, 32, 64, 64},
       {MaskKind::causal, {0, 1}, {0, 1}, 0, kDocumentStarts, 5}},
      {"documents striped P=2",
       {2, 2, 2, 16, 40, 40},
       {MaskKind::causal, {1, 2}, {0, 2}, 0, kDocumentStarts, 5}},
      {"full 7x13 d16", {1, 2, 2, 16, 7, 13}, {}},
      {"causal diagonal 33x65 d64", {2, 4, 4, 64, 33, 65}, {MaskKind::causal, {32, 1}, {0, 1}}},
      {"GQA 8:2 causal 64x64 d128", {1, 8, 2, 128, 64, 64}, {MaskKind::causal, {0, 1}, {0, 1}}},
      {"GQA 8:2 full 33x65 d64", {2, 8, 2, 64, 33, 65}, {}},
      {"striped causal P=4", {1, 4, 2, 32, 40, 40}, {MaskKind::causal, {1, 4}, {2, 4}}},
      {"causal, keys later than some queries",
       {1, 2, 1, 64, 50, 70},
       {MaskKind::causal, {0, 1}, {30, 1}}},
      {"whole block masked", {2, 2, 1, 64, 17, 19}, {MaskKind::causal, {0, 1}, {1000, 1}}},
      {"long rows 5x300 d64", {1, 2, 1, 64, 5, 300}, {}},
      // MLA (q/k 192, v 128) and the widest head dim, 256 (issue 14).
      {"MLA 192/128 causal 24x40",
       {1, 4, 2, 192, 24, 40, 128},
       {MaskKind::causal, {16, 1}, {0, 1}}},
      {"MLA 192/128 full 9x17 GQA 4:1", {2, 4, 1, 192, 9, 17, 128}, {}},
      {"d256 causal 20x20", {1, 2, 2, 256, 20, 20}, {MaskKind::causal, {0, 1}, {0, 1}}},
  };
}

struct Data {
  std::vector<float> q, k, v;
};

Data make_data(const tk::BlockShape& s, std::uint32_t seed) {
  return Data{random_floats(s.q_elements(), seed), random_floats(s.k_elements(), seed + 1),
              random_floats(s.v_elements(), seed + 2)};
}

}  // namespace

TEST_CASE("kernels: CPU fast forward matches the reference", "[kernels]") {
  std::uint32_t seed = 100;
  for (const Case& c : cases()) {
    for (int threads : {1, 3}) {
      INFO(c.name << ", threads " << threads);
      const tk::BlockShape& s = c.shape;
      const Data d = make_data(s, seed);
      std::vector<float> o(static_cast<std::size_t>(s.o_elements()));
      std::vector<float> lse(static_cast<std::size_t>(s.lse_elements()));
      tk::attention_forward_cpu(s, c.mask, d.q, d.k, d.v, o, lse, threads);
      std::vector<double> o_ref(o.size()), lse_ref(lse.size());
      tk::reference_forward(s, c.mask, to_double(d.q), to_double(d.k), to_double(d.v), o_ref,
                            lse_ref);
      CHECK(relative_error(o, o_ref) < 1e-5);
      CHECK(relative_error(lse, lse_ref) < 1e-5);
    }
    seed += 10;
  }
}

TEST_CASE("kernels: CPU fast backward matches the reference", "[kernels]") {
  std::uint32_t seed = 500;
  for (const Case& c : cases()) {
    for (int threads : {1, 2}) {
      INFO(c.name << ", threads " << threads);
      const tk::BlockShape& s = c.shape;
      const Data d = make_data(s, seed);
      const auto d_o = random_floats(s.o_elements(), seed + 7);
      // O and LSE of the full row: here the block is the whole row.
      std::vector<double> o_ref(static_cast<std::size_t>(s.o_elements()));
      std::vector<double> lse_ref(static_cast<std::size_t>(s.lse_elements()));
      tk::reference_forward(s, c.mask, to_double(d.q), to_double(d.k), to_double(d.v), o_ref,
                            lse_ref);
      const std::vector<float> o(o_ref.begin(), o_ref.end());
      const std::vector<float> lse(lse_ref.begin(), lse_ref.end());

      std::vector<double> dq_ref(d.q.size()), dk_ref(d.k.size()), dv_ref(d.v.size());
      tk::reference_backward(s, c.mask, to_double(d.q), to_double(d.k), to_double(d.v),
                             to_double(o), to_double(d_o), to_double(lse), dq_ref, dk_ref, dv_ref);
      // Start from non-zero gradients to check that contributions are added.
      std::vector<float> dq(d.q.size(), 0.5F), dk(d.k.size(), 0.5F), dv(d.v.size(), 0.5F);
      tk::attention_backward_cpu(s, c.mask, d.q, d.k, d.v, o, d_o, lse, dq, dk, dv, threads);
      for (auto* g : {&dq, &dk, &dv}) {
        for (float& x : *g) x -= 0.5F;
      }
      CHECK(relative_error(dq, dq_ref) < 1e-5);
      CHECK(relative_error(dk, dk_ref) < 1e-5);
      CHECK(relative_error(dv, dv_ref) < 1e-5);
    }
    seed += 10;
  }
}

TEST_CASE("kernels: CPU fast path: threads give bit-identical results", "[kernels]") {
  const tk::BlockShape s{2, 8, 2, 64, 33, 65};
  const tk::PositionMask m{tk::MaskKind::causal, {40, 1}, {0, 1}};
  const Data d = make_data(s, 900);
  std::vector<float> o1(d.q.size()), l1(static_cast<std::size_t>(s.lse_elements()));
  std::vector<float> o4(o1.size()), l4(l1.size());
  tk::attention_forward_cpu(s, m, d.q, d.k, d.v, o1, l1, 1);
  tk::attention_forward_cpu(s, m, d.q, d.k, d.v, o4, l4, 4);
  CHECK(o1 == o4);
  CHECK(l1 == l4);
}

TEST_CASE("kernels: CPU fast path: fully masked rows and bad sizes", "[kernels]") {
  const tk::BlockShape s{1, 2, 2, 8, 4, 4};
  // Queries at 0..3, keys at 2..5: rows 0 and 1 see nothing.
  const tk::PositionMask m{tk::MaskKind::causal, {0, 1}, {2, 1}};
  const Data d = make_data(s, 7);
  std::vector<float> o(d.q.size(), 9.0F), lse(static_cast<std::size_t>(s.lse_elements()), 9.0F);
  tk::attention_forward_cpu(s, m, d.q, d.k, d.v, o, lse);
  const float minus_inf = -std::numeric_limits<float>::infinity();
  for (std::int64_t h = 0; h < 2; ++h) {
    CHECK(lse[static_cast<std::size_t>(h * 4 + 0)] == minus_inf);
    CHECK(lse[static_cast<std::size_t>(h * 4 + 1)] == minus_inf);
    CHECK(std::isfinite(lse[static_cast<std::size_t>(h * 4 + 2)]));
  }
  for (std::size_t i = 0; i < 2 * 2 * 8; ++i) CHECK(o[i] == 0.0F);

  std::vector<float> dq(d.q.size()), dk(d.k.size()), dv(d.v.size());
  tk::attention_backward_cpu(s, m, d.q, d.k, d.v, o, d.q, lse, dq, dk, dv);
  for (float x : dq) CHECK(std::isfinite(x));
  for (std::size_t i = 0; i < 2 * 2 * 8; ++i) CHECK(dq[i] == 0.0F);

  std::vector<float> short_o(3);
  CHECK_THROWS_AS(tk::attention_forward_cpu(s, m, d.q, d.k, d.v, short_o, lse),
                  std::invalid_argument);
  tk::BlockShape bad = s;
  bad.kv_heads = 3;
  CHECK_THROWS_AS(tk::attention_forward_cpu(bad, m, d.q, d.k, d.v, o, lse), std::invalid_argument);
}

TEST_CASE("kernels: CPU fast path: a v head dim narrower than q/k is V's leading columns",
          "[kernels]") {
  // O = softmax(QK^T) V is linear in V column by column: a block with dv = 128 gives the first
  // 128 columns of the same block with dv = 192 whose V agrees on those columns.
  const tk::BlockShape mla{1, 4, 2, 192, 24, 40, 128};
  tk::BlockShape square = mla;
  square.v_head_dim = 0;
  const tk::PositionMask m{tk::MaskKind::causal, {16, 1}, {0, 1}};
  const auto q = random_floats(mla.q_elements(), 31);
  const auto k = random_floats(mla.k_elements(), 32);
  const auto v_wide = random_floats(square.v_elements(), 33);
  std::vector<float> v_narrow;
  for (std::size_t row = 0; row < v_wide.size() / 192; ++row) {
    v_narrow.insert(v_narrow.end(), v_wide.begin() + static_cast<std::ptrdiff_t>(row * 192),
                    v_wide.begin() + static_cast<std::ptrdiff_t>(row * 192 + 128));
  }
  std::vector<float> o_narrow(static_cast<std::size_t>(mla.o_elements()));
  std::vector<float> o_wide(static_cast<std::size_t>(square.o_elements()));
  std::vector<float> lse_narrow(static_cast<std::size_t>(mla.lse_elements()));
  std::vector<float> lse_wide(lse_narrow.size());
  tk::attention_forward_cpu(mla, m, q, k, v_narrow, o_narrow, lse_narrow);
  tk::attention_forward_cpu(square, m, q, k, v_wide, o_wide, lse_wide);
  CHECK(lse_narrow == lse_wide);
  for (std::size_t row = 0; row < o_narrow.size() / 128; ++row) {
    for (std::size_t d = 0; d < 128; ++d) {
      // The same weights times the same v columns, but the kernels' float accumulation may
      // group the 128 and 192 columns differently; 1e-6 is a few float ulps of |o| <= 1.
      REQUIRE(o_narrow[row * 128 + d] == Approx(o_wide[row * 192 + d]).margin(1e-6));
    }
  }
  CHECK(tk::forward_flops(mla, tk::PositionMask{}) == 2.0 * 24 * 40 * 4 * (192 + 128));
}
