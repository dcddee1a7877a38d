// Merging partial (O, LSE) pairs: order independence, -inf rows, and blockwise == full.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <limits>
#include <vector>

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/reference_attention.hpp"
#include "test_kernels_support.hpp"

namespace tk = tilesim::kernels;
using tk::testing::random_floats;
using tk::testing::relative_error;
using tk::testing::to_double;

namespace {

struct Partial {
  std::vector<float> o, lse;
};

// Three partials of the same rows; some rows of partial 1 are empty (-inf), and row 0 is empty
// in every partial.
std::vector<Partial> three_partials(const tk::RowsShape& r) {
  std::vector<Partial> parts;
  for (std::uint32_t i = 0; i < 3; ++i) {
    Partial p{random_floats(r.o_elements(), 10 + i),
              random_floats(r.lse_elements(), 20 + i, -3.0F, 6.0F)};
    p.lse[0] = -std::numeric_limits<float>::infinity();
    std::fill(p.o.begin(), p.o.begin() + r.head_dim, 0.0F);
    if (i == 1) {
      for (std::size_t row = 1; row < p.lse.size(); row += 3) {
        p.lse[row] = -std::numeric_limits<float>::infinity();
      }
    }
    parts.push_back(std::move(p));
  }
  return parts;
}

}  // namespace

TEST_CASE("kernels: merge of 3 partials is order independent (merge and accumulate)", "[kernels]") {
  const tk::RowsShape r{2, 9, 3, 16};
  const std::vector<Partial> parts = three_partials(r);
  std::array<int, 3> order{0, 1, 2};
  std::vector<float> first_o, first_lse;
  do {
    std::vector<tk::PartialOutput> views;
    for (int i : order) views.push_back({parts[i].o, parts[i].lse});
    std::vector<float> o(static_cast<std::size_t>(r.o_elements()));
    std::vector<float> lse(static_cast<std::size_t>(r.lse_elements()));
    tk::merge_partials_cpu(r, views, o, lse);

    std::vector<float> acc_o(o.size(), 0.0F);
    std::vector<float> acc_lse(lse.size(), -std::numeric_limits<float>::infinity());
    for (int i : order) tk::accumulate_partial_cpu(r, parts[i].o, parts[i].lse, acc_o, acc_lse);

    if (first_o.empty()) {
      first_o = o;
      first_lse = lse;
    }
    CHECK(relative_error(o, first_o) < 1e-6);
    CHECK(relative_error(lse, first_lse) < 1e-6);
    CHECK(relative_error(acc_o, first_o) < 1e-6);
    CHECK(relative_error(acc_lse, first_lse) < 1e-6);
  } while (std::next_permutation(order.begin(), order.end()));

  CHECK(first_lse[0] == -std::numeric_limits<float>::infinity());
  for (std::int64_t d = 0; d < r.head_dim; ++d) CHECK(first_o[static_cast<std::size_t>(d)] == 0.0F);

  // The float merge agrees with the double reference merge.
  std::vector<std::vector<double>> od, ld;
  std::vector<tk::ReferencePartial> ref_views;
  for (const Partial& p : parts) {
    od.push_back(to_double(p.o));
    ld.push_back(to_double(p.lse));
  }
  for (std::size_t i = 0; i < parts.size(); ++i) ref_views.push_back({od[i], ld[i]});
  std::vector<double> o_ref(first_o.size()), lse_ref(first_lse.size());
  tk::reference_merge(r, ref_views, o_ref, lse_ref);
  CHECK(relative_error(first_o, o_ref) < 1e-6);
  CHECK(relative_error(first_lse, lse_ref) < 1e-6);
}

TEST_CASE("kernels: merging KV blocks equals attention over the concatenated keys", "[kernels]") {
  // 3 KV chunks of a causal row split, GQA 8:2; the last chunk is fully masked for early queries
  // and the first query sees only the first chunk.
  const tk::BlockShape whole{2, 8, 2, 32, 21, 60};
  const tk::PositionMask whole_mask{tk::MaskKind::causal, {25, 2}, {0, 1}};
  const auto q = random_floats(whole.q_elements(), 1);
  const auto k = random_floats(whole.kv_elements(), 2);
  const auto v = random_floats(whole.kv_elements(), 3);
  std::vector<float> o_full(q.size()), lse_full(static_cast<std::size_t>(whole.lse_elements()));
  tk::attention_forward_cpu(whole, whole_mask, q, k, v, o_full, lse_full);

  const tk::RowsShape rows = tk::output_rows(whole);
  const std::int64_t row_elems = whole.kv_heads * whole.head_dim;
  std::vector<Partial> parts;
  std::vector<float> acc_o(q.size(), 0.0F);
  std::vector<float> acc_lse(lse_full.size(), -std::numeric_limits<float>::infinity());
  for (auto [first, last] : {std::pair<std::int64_t, std::int64_t>{0, 26}, {26, 40}, {40, 60}}) {
    tk::BlockShape s = whole;
    s.kv_tokens = last - first;
    const tk::PositionMask m{tk::MaskKind::causal, whole_mask.q, {first, 1}};
    const auto kc =
        tk::testing::slice_tokens(k, whole.batch, whole.kv_tokens, row_elems, first, last);
    const auto vc =
        tk::testing::slice_tokens(v, whole.batch, whole.kv_tokens, row_elems, first, last);
    Partial p{std::vector<float>(q.size()), std::vector<float>(lse_full.size())};
    tk::attention_forward_cpu(s, m, q, kc, vc, p.o, p.lse, 2);
    tk::accumulate_partial_cpu(rows, p.o, p.lse, acc_o, acc_lse);
    parts.push_back(std::move(p));
  }
  std::vector<tk::PartialOutput> views;
  for (const Partial& p : parts) views.push_back({p.o, p.lse});
  std::vector<float> o(q.size()), lse(lse_full.size());
  tk::merge_partials_cpu(rows, views, o, lse);
  CHECK(relative_error(o, o_full) < 1e-5);
  CHECK(relative_error(lse, lse_full) < 1e-5);
  CHECK(relative_error(acc_o, o_full) < 1e-5);
  CHECK(relative_error(acc_lse, lse_full) < 1e-5);
}
