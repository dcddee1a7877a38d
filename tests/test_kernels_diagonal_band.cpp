// PositionMask -> cuDNN diagonal band: hand-computed cases, then the band's rule against the
// mask's own visibility (PositionMask::visible) over every pair of many blocks; GPU peaks
// by device name (used to state kernel throughput as a share of peak).
#include <catch2/catch.hpp>

#include "kernels/diagonal_band.hpp"
#include "kernels/gpu_peak.hpp"

namespace tk = tilesim::kernels;
using tk::BandAlignment;
using tk::BandKind;
using tk::MaskKind;

namespace {

tk::BlockShape block(std::int64_t q_tokens, std::int64_t kv_tokens) {
  return tk::BlockShape{1, 2, 2, 64, q_tokens, kv_tokens};
}

tk::PositionMask causal(std::int64_t q_start, std::int64_t q_stride, std::int64_t kv_start,
                        std::int64_t kv_stride) {
  return tk::PositionMask{MaskKind::causal, {q_start, q_stride}, {kv_start, kv_stride}};
}

}  // namespace

TEST_CASE("kernels: diagonal band of hand-computed masks", "[kernels][cudnn]") {
  SECTION("a full mask needs no band") {
    CHECK(tk::diagonal_band(block(64, 64), {}).kind == BandKind::full);
  }
  SECTION("the diagonal block of contiguous chunks: the causal band, r = 0") {
    const tk::DiagonalBand b = tk::diagonal_band(block(128, 128), causal(0, 1, 0, 1));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.skipped_q_rows == 0);
    CHECK(b.right_bound == 0);
    CHECK(b.alignment == BandAlignment::top_left);
  }
  SECTION("queries 128..255 after keys 0..127: full") {
    CHECK(tk::diagonal_band(block(128, 128), causal(128, 1, 0, 1)).kind == BandKind::full);
  }
  SECTION("queries 0..127 before keys 128..255: empty") {
    CHECK(tk::diagonal_band(block(128, 128), causal(0, 1, 128, 1)).kind == BandKind::empty);
  }
  SECTION("77 queries from 100 against 130 keys from 0: r = 100, top left") {
    // Query 0 (position 100) sees keys 0..100; 130 - 77 = 53 != 100, so not bottom right.
    const tk::DiagonalBand b = tk::diagonal_band(block(77, 130), causal(100, 1, 0, 1));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.right_bound == 100);
    CHECK(b.alignment == BandAlignment::top_left);
  }
  SECTION("64 queries from 64 against 128 keys from 0: bottom right, r = 0") {
    const tk::DiagonalBand b = tk::diagonal_band(block(64, 128), causal(64, 1, 0, 1));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.right_bound == 0);
    CHECK(b.alignment == BandAlignment::bottom_right);
  }
  SECTION("keys 3 positions ahead: the first 3 query rows are cut off") {
    // Query i (position i) sees keys j with 3 + j <= i: rows 0..2 none, row 3 key 0.
    const tk::DiagonalBand b = tk::diagonal_band(block(8, 8), causal(0, 1, 3, 1));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.skipped_q_rows == 3);
    CHECK(b.right_bound == 0);
    CHECK(b.keeps(block(8, 8), 3, 0));
    CHECK_FALSE(b.keeps(block(8, 8), 3, 1));
    CHECK_FALSE(b.keeps(block(8, 8), 2, 0));
  }
  SECTION("striped, 4 ranks: queries 3 + 4i against keys 1 + 4j keep j <= i") {
    const tk::DiagonalBand b = tk::diagonal_band(block(65, 65), causal(3, 4, 1, 4));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.skipped_q_rows == 0);
    CHECK(b.right_bound == 0);  // floor(2 / 4) = 0
  }
  SECTION("striped, 4 ranks: queries 1 + 4i against keys 3 + 4j keep j <= i - 1") {
    const tk::DiagonalBand b = tk::diagonal_band(block(65, 65), causal(1, 4, 3, 4));
    CHECK(b.kind == BandKind::causal);
    CHECK(b.skipped_q_rows == 1);  // floor(-2 / 4) = -1
    CHECK(b.right_bound == 0);
  }
  SECTION("different strides that overlap: unsupported, saying why") {
    const tk::DiagonalBand b = tk::diagonal_band(block(16, 16), causal(0, 1, 0, 2));
    CHECK(b.kind == BandKind::unsupported);
    CHECK(b.why ==
          "query stride 1 and key stride 2 differ: the visible keys are not a diagonal "
          "band cuDNN can express");
  }
  SECTION("different strides, every key first: full") {
    // Keys at 0, 2, ..., 18 all precede queries 100..109.
    CHECK(tk::diagonal_band(block(10, 10), causal(100, 1, 0, 2)).kind == BandKind::full);
  }
}

TEST_CASE("kernels: diagonal band keeps exactly the mask's visible pairs", "[kernels][cudnn]") {
  int checked = 0;
  for (std::int64_t stride : {1, 2, 4, 8}) {
    for (std::int64_t q_tokens : {1, 5, 16}) {
      for (std::int64_t kv_tokens : {1, 7, 16}) {
        for (std::int64_t q_start = -20; q_start <= 20; q_start += 3) {
          for (std::int64_t kv_start : {0, 1, 5, 13}) {
            const tk::BlockShape s = block(q_tokens, kv_tokens);
            const tk::PositionMask m = causal(q_start, stride, kv_start, stride);
            const tk::DiagonalBand b = tk::diagonal_band(s, m);
            REQUIRE(b.kind != BandKind::unsupported);
            REQUIRE(b.right_bound >= 0);
            REQUIRE(b.skipped_q_rows < q_tokens);
            for (std::int64_t i = 0; i < q_tokens; ++i) {
              for (std::int64_t j = 0; j < kv_tokens; ++j) {
                INFO("stride " << stride << " q " << q_start << "+" << q_tokens << " kv "
                               << kv_start << "+" << kv_tokens << " pair " << i << "," << j);
                REQUIRE(b.keeps(s, i, j) == m.visible(i, j));
              }
            }
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked == 4 * 3 * 3 * 14 * 4);
}

TEST_CASE("kernels: dense bf16 peak from the device name", "[kernels]") {
  CHECK(tk::dense_bf16_peak_flops("NVIDIA H200") == 989e12);
  CHECK(tk::dense_bf16_peak_flops("NVIDIA H100 80GB HBM3") == 989e12);
  CHECK(tk::dense_bf16_peak_flops("NVIDIA H100 PCIe") == 756e12);
  CHECK(tk::dense_bf16_peak_flops("NVIDIA H200 NVL") == 835e12);
  CHECK(tk::dense_bf16_peak_flops("NVIDIA A100-SXM4-80GB") == 312e12);
  CHECK(tk::dense_bf16_peak_flops("Tesla T4") == 0.0);
}
