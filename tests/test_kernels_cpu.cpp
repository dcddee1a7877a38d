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
  };
}

struct Data {
  std::vector<float> q, k, v;
};

Data make_data(const tk::BlockShape& s, std::uint32_t seed) {
  return Data{random_floats(s.q_elements(), seed), random_floats(s.kv_elements(), seed + 1),
              random_floats(s.kv_elements(), seed + 2)};
}

}  // namespace

TEST_CASE("kernels: CPU fast forward matches the reference", "[kernels]") {
  std::uint32_t seed = 100;
  for (const Case& c : cases()) {
    for (int threads : {1, 3}) {
      INFO(c.name << ", threads " << threads);
      const tk::BlockShape& s = c.shape;
      const Data d = make_data(s, seed);
      std::vector<float> o(d.q.size()), lse(static_cast<std::size_t>(s.lse_elements()));
      tk::attention_forward_cpu(s, c.mask, d.q, d.k, d.v, o, lse, threads);
      std::vector<double> o_ref(d.q.size()), lse_ref(lse.size());
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
      const auto d_o = random_floats(s.q_elements(), seed + 7);
      // O and LSE of the full row: here the block is the whole row.
      std::vector<double> o_ref(d.q.size()), lse_ref(static_cast<std::size_t>(s.lse_elements()));
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
