// CUDA kernels against the CPU reference (bf16 / fp16 inputs). Without a GPU every test case
// prints a WARN and returns: Catch2 v2 has no SKIP, so a skipped case shows as passed.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/reference_attention.hpp"
#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/block_kernels.hpp"
#include "kernels/cuda/cudnn_attention.hpp"
#include "kernels/cuda/device_info.hpp"
#include "test_kernels_support.hpp"

namespace tk = tilesim::kernels;
using tk::DeviceBuffer;
using tk::testing::random_floats;
using tk::testing::relative_error;
using tk::testing::to_double;

namespace {

bool gpu_or_skip() {
  std::string why;
  if (tk::cuda_device_available(&why)) return true;
  WARN("no CUDA device: " << why << "; GPU kernel tests skipped");
  return false;
}

std::size_t bytes_of(std::size_t n, std::size_t elem) { return n * elem; }

// A tensor uploaded to the device in `dtype`, plus its rounded values on the host.
struct DeviceTensor {
  DeviceBuffer data;
  std::vector<double> rounded;
};

DeviceTensor upload(const std::vector<float>& host, tk::DType dtype) {
  DeviceBuffer f32(bytes_of(host.size(), sizeof(float)));
  f32.upload(host.data(), f32.bytes());
  DeviceTensor t{DeviceBuffer(bytes_of(host.size(), 2)), {}};
  const auto n = static_cast<std::int64_t>(host.size());
  tk::convert_from_f32_cuda(f32.as<float>(), t.data.data(), n, dtype, nullptr);
  tk::convert_to_f32_cuda(t.data.data(), f32.as<float>(), n, dtype, nullptr);
  std::vector<float> back(host.size());
  f32.download(back.data(), f32.bytes());
  t.rounded = to_double(back);
  return t;
}

DeviceBuffer zeros(std::int64_t n) {
  DeviceBuffer b(bytes_of(static_cast<std::size_t>(n), sizeof(float)));
  b.fill_zero();
  return b;
}

std::vector<float> download(const DeviceBuffer& b) {
  std::vector<float> out(b.bytes() / sizeof(float));
  b.download(out.data(), b.bytes());
  return out;
}

struct Case {
  std::string name;
  tk::BlockShape shape;
  tk::PositionMask mask;
};

std::vector<Case> cases() {
  using tk::MaskKind;
  return {
      {"full 77x130 d64", {1, 2, 2, 64, 77, 130}, {}},
      {"causal diagonal 130x130 d128",
       {1, 2, 2, 128, 130, 130},
       {MaskKind::causal, {0, 1}, {0, 1}}},
      {"GQA 8:2 causal offset 77x130 d64",
       {2, 8, 2, 64, 77, 130},
       {MaskKind::causal, {100, 1}, {0, 1}}},
      {"striped causal d128", {1, 4, 1, 128, 65, 65}, {MaskKind::causal, {3, 4}, {1, 4}}},
      {"whole block masked d64", {1, 2, 1, 64, 33, 40}, {MaskKind::causal, {0, 1}, {500, 1}}},
  };
}

constexpr double kTolerance = 2e-2;  // bf16 inputs and bf16 P / dS operands, fp32 accumulation

}  // namespace

TEST_CASE("kernels: CUDA device detection does not crash", "[kernels][cuda]") {
  std::string why;
  const bool available = tk::cuda_device_available(&why);
  if (!available) {
    CHECK_FALSE(why.empty());
    WARN("no CUDA device: " << why << "; GPU kernel tests skipped");
  }
}

TEST_CASE("kernels: CUDA forward and backward match the reference", "[kernels][cuda]") {
  if (!gpu_or_skip()) return;
  std::uint32_t seed = 1000;
  for (const Case& c : cases()) {
    for (tk::DType dtype : {tk::DType::bf16, tk::DType::fp16}) {
      INFO(c.name << (dtype == tk::DType::bf16 ? " bf16" : " fp16"));
      const tk::BlockShape& s = c.shape;
      const DeviceTensor q = upload(random_floats(s.q_elements(), seed), dtype);
      const DeviceTensor k = upload(random_floats(s.kv_elements(), seed + 1), dtype);
      const DeviceTensor v = upload(random_floats(s.kv_elements(), seed + 2), dtype);
      const DeviceTensor d_o = upload(random_floats(s.q_elements(), seed + 3), dtype);
      seed += 10;

      std::vector<double> o_ref(q.rounded.size()),
          lse_ref(static_cast<std::size_t>(s.lse_elements()));
      tk::reference_forward(s, c.mask, q.rounded, k.rounded, v.rounded, o_ref, lse_ref);
      DeviceBuffer o = zeros(s.q_elements());
      DeviceBuffer lse = zeros(s.lse_elements());
      tk::attention_forward_cuda(s, c.mask, dtype, q.data.data(), k.data.data(), v.data.data(),
                                 o.as<float>(), lse.as<float>(), nullptr);
      tk::cuda_synchronize(nullptr);
      CHECK(relative_error(download(o), o_ref) < kTolerance);
      CHECK(relative_error(download(lse), lse_ref) < kTolerance);

      // Backward with the reference's O and LSE as the full row's values.
      std::vector<double> dq_ref(o_ref.size()), dk_ref(k.rounded.size()), dv_ref(v.rounded.size());
      tk::reference_backward(s, c.mask, q.rounded, k.rounded, v.rounded, o_ref, d_o.rounded,
                             lse_ref, dq_ref, dk_ref, dv_ref);
      const std::vector<float> o_f(o_ref.begin(), o_ref.end());
      const std::vector<float> lse_f(lse_ref.begin(), lse_ref.end());
      DeviceBuffer o_final(bytes_of(o_f.size(), sizeof(float)));
      o_final.upload(o_f.data(), o_final.bytes());
      DeviceBuffer lse_final(bytes_of(lse_f.size(), sizeof(float)));
      lse_final.upload(lse_f.data(), lse_final.bytes());
      DeviceBuffer d_rowsum = zeros(s.lse_elements());
      tk::attention_rowsum_cuda(tk::output_rows(s), dtype, o_final.as<float>(), d_o.data.data(),
                                d_rowsum.as<float>(), nullptr);
      DeviceBuffer dq = zeros(s.q_elements());
      DeviceBuffer dk = zeros(s.kv_elements());
      DeviceBuffer dv = zeros(s.kv_elements());
      tk::attention_backward_cuda(s, c.mask, dtype, q.data.data(), k.data.data(), v.data.data(),
                                  d_o.data.data(), lse_final.as<float>(), d_rowsum.as<float>(),
                                  dq.as<float>(), dk.as<float>(), dv.as<float>(), nullptr);
      tk::cuda_synchronize(nullptr);
      CHECK(relative_error(download(dq), dq_ref) < kTolerance);
      CHECK(relative_error(download(dk), dk_ref) < kTolerance);
      CHECK(relative_error(download(dv), dv_ref) < kTolerance);
    }
  }
}

namespace {

// Blocks cuDNN can express (diagonal bands of every kind the plans produce) and one it cannot.
std::vector<Case> cudnn_cases() {
  using tk::MaskKind;
  return {
      {"full 77x130 d64", {1, 2, 2, 64, 77, 130}, {}},
      {"causal diagonal 256x256 d128",
       {1, 4, 4, 128, 256, 256},
       {MaskKind::causal, {0, 1}, {0, 1}}},
      {"GQA 8:2 causal band r=100 77x130 d64",
       {2, 8, 2, 64, 77, 130},
       {MaskKind::causal, {100, 1}, {0, 1}}},
      {"causal bottom right 64x128 d128",
       {1, 2, 2, 128, 64, 128},
       {MaskKind::causal, {64, 1}, {0, 1}}},
      {"striped keys ahead, first row cut off d128",
       {1, 4, 1, 128, 65, 65},
       {MaskKind::causal, {1, 4}, {3, 4}}},
      {"whole block masked d64", {1, 2, 1, 64, 33, 40}, {MaskKind::causal, {0, 1}, {500, 1}}},
  };
}

}  // namespace

TEST_CASE("kernels: cuDNN forward and backward match the reference", "[kernels][cuda][cudnn]") {
  if (!tk::cudnn_attention_built()) {
    WARN("cuDNN kernels not built: " << tk::cudnn_unsupported_reason({}, {}) << "; skipped");
    return;
  }
  if (!gpu_or_skip()) return;
  tk::BlockKernels kernels(tk::KernelFamily::cudnn);
  std::uint32_t seed = 3000;
  for (const Case& c : cudnn_cases()) {
    for (tk::DType dtype : {tk::DType::bf16, tk::DType::fp16}) {
      INFO(c.name << (dtype == tk::DType::bf16 ? " bf16" : " fp16"));
      const tk::BlockShape& s = c.shape;
      const DeviceTensor q = upload(random_floats(s.q_elements(), seed), dtype);
      const DeviceTensor k = upload(random_floats(s.kv_elements(), seed + 1), dtype);
      const DeviceTensor v = upload(random_floats(s.kv_elements(), seed + 2), dtype);
      const DeviceTensor d_o = upload(random_floats(s.q_elements(), seed + 3), dtype);
      seed += 10;
      std::vector<double> o_ref(q.rounded.size()),
          lse_ref(static_cast<std::size_t>(s.lse_elements()));
      tk::reference_forward(s, c.mask, q.rounded, k.rounded, v.rounded, o_ref, lse_ref);
      DeviceBuffer o = zeros(s.q_elements());
      DeviceBuffer lse = zeros(s.lse_elements());
      kernels.forward(s, c.mask, dtype, q.data.data(), k.data.data(), v.data.data(), o.as<float>(),
                      lse.as<float>(), nullptr);
      tk::cuda_synchronize(nullptr);
      CHECK(relative_error(download(o), o_ref) < kTolerance);
      CHECK(relative_error(download(lse), lse_ref) < kTolerance);

      std::vector<double> dq_ref(o_ref.size()), dk_ref(k.rounded.size()), dv_ref(v.rounded.size());
      tk::reference_backward(s, c.mask, q.rounded, k.rounded, v.rounded, o_ref, d_o.rounded,
                             lse_ref, dq_ref, dk_ref, dv_ref);
      const std::vector<float> o_f(o_ref.begin(), o_ref.end());
      const std::vector<float> lse_f(lse_ref.begin(), lse_ref.end());
      DeviceBuffer o_final(bytes_of(o_f.size(), sizeof(float)));
      o_final.upload(o_f.data(), o_final.bytes());
      DeviceBuffer lse_final(bytes_of(lse_f.size(), sizeof(float)));
      lse_final.upload(lse_f.data(), lse_final.bytes());
      DeviceBuffer d_rowsum = zeros(s.lse_elements());
      DeviceBuffer dq = zeros(s.q_elements());
      DeviceBuffer dk = zeros(s.kv_elements());
      DeviceBuffer dv = zeros(s.kv_elements());
      kernels.backward(s, c.mask, dtype, q.data.data(), k.data.data(), v.data.data(),
                       o_final.as<float>(), d_o.data.data(), lse_final.as<float>(),
                       d_rowsum.as<float>(), dq.as<float>(), dk.as<float>(), dv.as<float>(),
                       nullptr);
      tk::cuda_synchronize(nullptr);
      CHECK(relative_error(download(dq), dq_ref) < kTolerance);
      CHECK(relative_error(download(dk), dk_ref) < kTolerance);
      CHECK(relative_error(download(dv), dv_ref) < kTolerance);
      // Every case is a band: none may have run on the own kernels.
      for (const auto& [why, blocks] : kernels.fallbacks()) INFO("fell back: " << why);
      CHECK(kernels.fallbacks().empty());
    }
  }
}

TEST_CASE("kernels: cuDNN falls back to the own kernels for a mask it cannot express",
          "[kernels][cuda][cudnn]") {
  if (!tk::cudnn_attention_built() || !gpu_or_skip()) return;
  tk::BlockKernels kernels(tk::KernelFamily::cudnn);
  const tk::BlockShape s{1, 2, 2, 64, 48, 48};
  const tk::PositionMask mask{tk::MaskKind::causal, {0, 1}, {0, 2}};
  const DeviceTensor q = upload(random_floats(s.q_elements(), 7), tk::DType::bf16);
  const DeviceTensor k = upload(random_floats(s.kv_elements(), 8), tk::DType::bf16);
  const DeviceTensor v = upload(random_floats(s.kv_elements(), 9), tk::DType::bf16);
  std::vector<double> o_ref(q.rounded.size()), lse_ref(static_cast<std::size_t>(s.lse_elements()));
  tk::reference_forward(s, mask, q.rounded, k.rounded, v.rounded, o_ref, lse_ref);
  DeviceBuffer o = zeros(s.q_elements());
  DeviceBuffer lse = zeros(s.lse_elements());
  kernels.forward(s, mask, tk::DType::bf16, q.data.data(), k.data.data(), v.data.data(),
                  o.as<float>(), lse.as<float>(), nullptr);
  tk::cuda_synchronize(nullptr);
  CHECK(relative_error(download(o), o_ref) < kTolerance);
  REQUIRE(kernels.fallbacks().size() == 1);
  CHECK(kernels.fallbacks().begin()->first.find("stride") != std::string::npos);
  CHECK(kernels.fallbacks().begin()->second == 1);
}

TEST_CASE("kernels: CUDA merge and accumulate match the reference merge", "[kernels][cuda]") {
  if (!gpu_or_skip()) return;
  const tk::RowsShape r{2, 77, 3, 64};
  std::vector<std::vector<float>> o_host, lse_host;
  std::vector<DeviceBuffer> o_dev, lse_dev;
  for (std::uint32_t i = 0; i < 3; ++i) {
    o_host.push_back(random_floats(r.o_elements(), 40 + i));
    lse_host.push_back(random_floats(r.lse_elements(), 50 + i, -3.0F, 6.0F));
    lse_host.back()[0] = -std::numeric_limits<float>::infinity();  // row 0 empty everywhere
    std::fill(o_host.back().begin(), o_host.back().begin() + r.head_dim, 0.0F);
    o_dev.emplace_back(bytes_of(o_host.back().size(), sizeof(float)));
    o_dev.back().upload(o_host.back().data(), o_dev.back().bytes());
    lse_dev.emplace_back(bytes_of(lse_host.back().size(), sizeof(float)));
    lse_dev.back().upload(lse_host.back().data(), lse_dev.back().bytes());
  }
  std::vector<std::vector<double>> od, ld;
  std::vector<tk::ReferencePartial> views;
  for (std::size_t i = 0; i < 3; ++i) {
    od.push_back(to_double(o_host[i]));
    ld.push_back(to_double(lse_host[i]));
  }
  for (std::size_t i = 0; i < 3; ++i) views.push_back({od[i], ld[i]});
  std::vector<double> o_ref(static_cast<std::size_t>(r.o_elements()));
  std::vector<double> lse_ref(static_cast<std::size_t>(r.lse_elements()));
  tk::reference_merge(r, views, o_ref, lse_ref);

  const std::vector<const float*> o_ptrs{o_dev[0].as<float>(), o_dev[1].as<float>(),
                                         o_dev[2].as<float>()};
  const std::vector<const float*> lse_ptrs{lse_dev[0].as<float>(), lse_dev[1].as<float>(),
                                           lse_dev[2].as<float>()};
  DeviceBuffer o = zeros(r.o_elements());
  DeviceBuffer lse = zeros(r.lse_elements());
  tk::merge_partials_cuda(r, o_ptrs.data(), lse_ptrs.data(), o_ptrs.size(), o.as<float>(),
                          lse.as<float>(), nullptr);

  DeviceBuffer acc_o = zeros(r.o_elements());
  std::vector<float> empty_lse(lse_ref.size(), -std::numeric_limits<float>::infinity());
  DeviceBuffer acc_lse(bytes_of(empty_lse.size(), sizeof(float)));
  acc_lse.upload(empty_lse.data(), acc_lse.bytes());
  for (std::size_t i : {2U, 0U, 1U}) {
    tk::accumulate_partial_cuda(r, o_ptrs[i], lse_ptrs[i], acc_o.as<float>(), acc_lse.as<float>(),
                                nullptr);
  }
  tk::cuda_synchronize(nullptr);
  CHECK(relative_error(download(o), o_ref) < 1e-5);
  CHECK(relative_error(download(lse), lse_ref) < 1e-5);
  CHECK(relative_error(download(acc_o), o_ref) < 1e-5);
  CHECK(relative_error(download(acc_lse), lse_ref) < 1e-5);
}
