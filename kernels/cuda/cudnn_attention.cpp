#include "kernels/cuda/cudnn_attention.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "kernels/cuda/device_info.hpp"
#include "kernels/diagonal_band.hpp"

namespace tilesim::kernels {
namespace {

namespace fe = cudnn_frontend;

// Tensor uids of the variant packs.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

enum class PassKind : std::int64_t { forward, backward };

// What a graph depends on: pass, dtype, shape, the rows cuDNN runs, the band, where Stats is.
using GraphKey = std::array<std::int64_t, 13>;

// cuDNN assumes 16-byte aligned operands. The LSE rows of a block that skips leading rows may
// start off that alignment; Stats then goes through a packed [batch][heads][rows] scratch.
bool stats_packed(const float* lse, const DiagonalBand& band) {
  return reinterpret_cast<std::uintptr_t>(lse + band.skipped_q_rows) % 16 != 0;
}

fe::graph::Tensor_attributes stats_layout(const BlockShape& s, std::int64_t rows, bool packed) {
  const std::int64_t tokens = packed ? rows : s.q_tokens;
  return fe::graph::Tensor_attributes()
      .set_name("Stats")
      .set_uid(kStats)
      .set_dim({s.batch, s.heads, rows, 1})
      .set_stride({s.heads * tokens, tokens, 1, 1})
      .set_data_type(fe::DataType_t::FLOAT);
}

GraphKey key_of(PassKind pass, DType dtype, const BlockShape& s, const DiagonalBand& band,
                bool packed) {
  return {static_cast<std::int64_t>(pass),
          packed ? 1 : 0,
          dtype == DType::bf16 ? 0 : 1,
          s.batch,
          s.heads,
          s.kv_heads,
          s.head_dim,
          s.q_tokens,
          s.kv_tokens,
          static_cast<std::int64_t>(band.kind),
          band.skipped_q_rows,
          band.right_bound,
          static_cast<std::int64_t>(band.alignment)};
}

void require(fe::error_t status, const char* step) {
  if (status.is_bad()) {
    throw CudnnUnsupported(std::string("cuDNN ") + step + ": " + status.get_message());
  }
}

void cuda_require(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// Dims and strides of the rows cuDNN runs, as [batch][heads][rows][head_dim] over memory laid
// out [batch][tokens][heads][head_dim] (tokens = the whole chunk, rows <= tokens).
fe::graph::Tensor_attributes bshd(const char* name, std::int64_t uid, std::int64_t batch,
                                  std::int64_t heads, std::int64_t rows, std::int64_t tokens,
                                  std::int64_t head_dim) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim({batch, heads, rows, head_dim})
      .set_stride({tokens * heads * head_dim, head_dim, heads * head_dim, 1});
}

template <typename Attributes>
void apply_band(Attributes& attributes, const DiagonalBand& band) {
  if (band.kind != BandKind::causal) return;
  attributes.set_diagonal_alignment(band.alignment == BandAlignment::bottom_right
                                        ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                        : fe::DiagonalAlignment_t::TOP_LEFT);
  attributes.set_diagonal_band_right_bound(static_cast<int>(band.right_bound));
}

// cudnnHandle_t owned; created on the current device.
class CudnnHandle {
 public:
  CudnnHandle() {
    const cudnnStatus_t status = cudnnCreate(&handle_);
    if (status != CUDNN_STATUS_SUCCESS) {
      throw std::runtime_error(std::string("cudnnCreate: ") + cudnnGetErrorString(status));
    }
  }
  ~CudnnHandle() { cudnnDestroy(handle_); }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

struct BuiltGraph {
  std::unique_ptr<fe::graph::Graph> graph;
  std::int64_t workspace_bytes = 0;
};

std::size_t bytes16(std::int64_t elements) { return static_cast<std::size_t>(elements) * 2; }

}  // namespace

bool cudnn_attention_built() { return true; }

std::string cudnn_unsupported_reason(const BlockShape& shape, const PositionMask& mask) {
  if (shape.head_dim % 8 != 0 || shape.head_dim > 256) {
    return "cuDNN fused attention takes head_dim a multiple of 8 up to 256, not " +
           std::to_string(shape.head_dim);
  }
  const DiagonalBand band = diagonal_band(shape, mask);
  return band.kind == BandKind::unsupported ? band.why : std::string();
}

struct CudnnAttention::Impl {
  std::unique_ptr<CudnnHandle> handle;
  std::map<GraphKey, BuiltGraph> graphs;
  std::map<GraphKey, std::string> rejected;  // cuDNN's message for configurations it refused
  DeviceBuffer workspace, scratch_o, scratch_dq, scratch_dk, scratch_dv;  // 16-bit scratch
  DeviceBuffer scratch_stats;  // packed Stats, see stats_packed

  cudnnHandle_t handle_on(void* stream) {
    if (!handle) handle = std::make_unique<CudnnHandle>();
    const cudnnStatus_t status = cudnnSetStream(handle->get(), static_cast<cudaStream_t>(stream));
    if (status != CUDNN_STATUS_SUCCESS) {
      throw std::runtime_error(std::string("cudnnSetStream: ") + cudnnGetErrorString(status));
    }
    return handle->get();
  }

  // Grows `buffer` to `bytes`; the stream is synchronized first, since queued work may still
  // use the old memory.
  static void ensure(DeviceBuffer& buffer, std::size_t bytes, void* stream) {
    if (buffer.bytes() >= bytes) return;
    cuda_synchronize(stream);
    buffer = DeviceBuffer(bytes);
  }

  const BuiltGraph& graph_for(PassKind pass, DType dtype, const BlockShape& s,
                              const DiagonalBand& band, bool packed, cudnnHandle_t h) {
    const GraphKey key = key_of(pass, dtype, s, band, packed);
    if (auto it = graphs.find(key); it != graphs.end()) return it->second;
    if (auto it = rejected.find(key); it != rejected.end()) throw CudnnUnsupported(it->second);
    try {
      BuiltGraph built = pass == PassKind::forward ? build_forward(dtype, s, band, packed, h)
                                                   : build_backward(dtype, s, band, packed, h);
      return graphs.emplace(key, std::move(built)).first->second;
    } catch (const CudnnUnsupported& e) {
      rejected.emplace(key, e.what());
      throw;
    }
  }

  static std::unique_ptr<fe::graph::Graph> new_graph(DType dtype) {
    auto g = std::make_unique<fe::graph::Graph>();
    g->set_io_data_type(dtype == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    return g;
  }

  static BuiltGraph finish(std::unique_ptr<fe::graph::Graph> g, cudnnHandle_t h) {
    require(g->validate(), "validate");
    require(g->build_operation_graph(h), "build_operation_graph");
    require(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans");
    require(g->check_support(h), "check_support");
    require(g->build_plans(h), "build_plans");
    BuiltGraph built;
    require(g->get_workspace_size(built.workspace_bytes), "get_workspace_size");
    built.graph = std::move(g);
    return built;
  }

  static BuiltGraph build_forward(DType dtype, const BlockShape& s, const DiagonalBand& band,
                                  bool packed, cudnnHandle_t h) {
    auto g = new_graph(dtype);
    const std::int64_t rows = s.q_tokens - band.skipped_q_rows;
    auto q = g->tensor(bshd("Q", kQ, s.batch, s.heads, rows, s.q_tokens, s.head_dim));
    auto k = g->tensor(bshd("K", kK, s.batch, s.kv_heads, s.kv_tokens, s.kv_tokens, s.head_dim));
    auto v = g->tensor(bshd("V", kV, s.batch, s.kv_heads, s.kv_tokens, s.kv_tokens, s.head_dim));
    auto options = fe::graph::SDPA_attributes()
                       .set_name("block_forward")
                       .set_generate_stats(true)
                       .set_attn_scale(1.0F / std::sqrt(static_cast<float>(s.head_dim)));
    apply_band(options, band);
    auto [o, stats] = g->sdpa(q, k, v, options);
    const fe::graph::Tensor_attributes o_layout =
        bshd("O", kO, s.batch, s.heads, rows, s.q_tokens, s.head_dim);
    o->set_output(true).set_uid(kO).set_dim(o_layout.get_dim()).set_stride(o_layout.get_stride());
    const fe::graph::Tensor_attributes stats_at = stats_layout(s, rows, packed);
    stats->set_output(true)
        .set_uid(kStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim(stats_at.get_dim())
        .set_stride(stats_at.get_stride());
    return finish(std::move(g), h);
  }

  static BuiltGraph build_backward(DType dtype, const BlockShape& s, const DiagonalBand& band,
                                   bool packed, cudnnHandle_t h) {
    auto g = new_graph(dtype);
    const std::int64_t rows = s.q_tokens - band.skipped_q_rows;
    auto q = g->tensor(bshd("Q", kQ, s.batch, s.heads, rows, s.q_tokens, s.head_dim));
    auto k = g->tensor(bshd("K", kK, s.batch, s.kv_heads, s.kv_tokens, s.kv_tokens, s.head_dim));
    auto v = g->tensor(bshd("V", kV, s.batch, s.kv_heads, s.kv_tokens, s.kv_tokens, s.head_dim));
    auto o = g->tensor(bshd("O", kO, s.batch, s.heads, rows, s.q_tokens, s.head_dim));
    auto d_o = g->tensor(bshd("dO", kDO, s.batch, s.heads, rows, s.q_tokens, s.head_dim));
    auto stats = g->tensor(stats_layout(s, rows, packed));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("block_backward")
                       .set_attn_scale(1.0F / std::sqrt(static_cast<float>(s.head_dim)));
    apply_band(options, band);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
    const auto q_layout = bshd("dQ", kDQ, s.batch, s.heads, rows, s.q_tokens, s.head_dim);
    const auto kv_layout =
        bshd("dK", kDK, s.batch, s.kv_heads, s.kv_tokens, s.kv_tokens, s.head_dim);
    dq->set_output(true).set_uid(kDQ).set_dim(q_layout.get_dim()).set_stride(q_layout.get_stride());
    dk->set_output(true)
        .set_uid(kDK)
        .set_dim(kv_layout.get_dim())
        .set_stride(kv_layout.get_stride());
    dv->set_output(true)
        .set_uid(kDV)
        .set_dim(kv_layout.get_dim())
        .set_stride(kv_layout.get_stride());
    return finish(std::move(g), h);
  }

  void execute(const BuiltGraph& built, std::unordered_map<std::int64_t, void*>& pack, void* stream,
               cudnnHandle_t h) {
    ensure(workspace, static_cast<std::size_t>(built.workspace_bytes), stream);
    const fe::error_t status = built.graph->execute(h, pack, workspace.data());
    if (status.is_bad()) {
      fe::error_t copy = status;
      throw std::runtime_error("cuDNN execute: " + copy.get_message());
    }
  }

  // The band cuDNN runs, or CudnnUnsupported with the reason.
  static DiagonalBand band_for(const BlockShape& shape, const PositionMask& mask) {
    const std::string why = cudnn_unsupported_reason(shape, mask);
    if (!why.empty()) throw CudnnUnsupported(why);
    return diagonal_band(shape, mask);
  }

  void run_forward(const BlockShape& s, const DiagonalBand& band, DType dtype, const void* q,
                   const void* k, const void* v, void* o16, float* lse, void* stream) {
    const cudnnHandle_t h = handle_on(stream);
    const bool packed = stats_packed(lse, band);
    const BuiltGraph& built = graph_for(PassKind::forward, dtype, s, band, packed, h);
    const std::size_t row_skip = bytes16(band.skipped_q_rows * s.heads * s.head_dim);
    const std::int64_t rows = s.q_tokens - band.skipped_q_rows;
    if (packed) ensure(scratch_stats, stats_bytes(s, rows), stream);
    float* stats_out = packed ? scratch_stats.as<float>() : lse + band.skipped_q_rows;
    std::unordered_map<std::int64_t, void*> pack{
        {kQ, const_cast<std::byte*>(static_cast<const std::byte*>(q)) + row_skip},
        {kK, const_cast<void*>(k)},
        {kV, const_cast<void*>(v)},
        {kO, static_cast<std::byte*>(o16) + row_skip},
        {kStats, stats_out}};
    execute(built, pack, stream, h);
    if (packed)
      copy_stats(s, rows, scratch_stats.as<float>(), rows, lse + band.skipped_q_rows, s.q_tokens,
                 stream);
  }

  static std::size_t stats_bytes(const BlockShape& s, std::int64_t rows) {
    return static_cast<std::size_t>(s.batch * s.heads * rows) * sizeof(float);
  }

  // Copies `rows` floats per (batch, head) between LSE layouts of row pitch src_tokens and
  // dst_tokens (a 2D copy has no alignment requirement).
  static void copy_stats(const BlockShape& s, std::int64_t rows, const float* src,
                         std::int64_t src_tokens, float* dst, std::int64_t dst_tokens,
                         void* stream) {
    const auto pitch = [](std::int64_t tokens) {
      return static_cast<std::size_t>(tokens) * sizeof(float);
    };
    cuda_require(cudaMemcpy2DAsync(dst, pitch(dst_tokens), src, pitch(src_tokens), pitch(rows),
                                   static_cast<std::size_t>(s.batch * s.heads),
                                   cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
                 "cudaMemcpy2DAsync");
  }

  void run_backward(const BlockShape& s, const DiagonalBand& band, DType dtype, const void* q,
                    const void* k, const void* v, const void* o16, const void* d_o,
                    const float* lse, void* dq16, void* dk16, void* dv16, void* stream) {
    const cudnnHandle_t h = handle_on(stream);
    const bool packed = stats_packed(lse, band);
    const BuiltGraph& built = graph_for(PassKind::backward, dtype, s, band, packed, h);
    const std::size_t row_skip = bytes16(band.skipped_q_rows * s.heads * s.head_dim);
    const std::int64_t rows = s.q_tokens - band.skipped_q_rows;
    float* stats_in = const_cast<float*>(lse) + band.skipped_q_rows;
    if (packed) {
      ensure(scratch_stats, stats_bytes(s, rows), stream);
      copy_stats(s, rows, stats_in, s.q_tokens, scratch_stats.as<float>(), rows, stream);
      stats_in = scratch_stats.as<float>();
    }
    auto skip = [row_skip](const void* p) {
      return const_cast<std::byte*>(static_cast<const std::byte*>(p)) + row_skip;
    };
    std::unordered_map<std::int64_t, void*> pack{
        {kQ, skip(q)},    {kK, const_cast<void*>(k)}, {kV, const_cast<void*>(v)}, {kO, skip(o16)},
        {kDO, skip(d_o)}, {kStats, stats_in},         {kDQ, skip(dq16)},          {kDK, dk16},
        {kDV, dv16}};
    execute(built, pack, stream, h);
  }
};

CudnnAttention::CudnnAttention() : impl_(std::make_unique<Impl>()) {}
CudnnAttention::~CudnnAttention() = default;

std::size_t CudnnAttention::cached_graphs() const { return impl_->graphs.size(); }

void CudnnAttention::forward(const BlockShape& shape, const PositionMask& mask, DType dtype,
                             const void* q, const void* k, const void* v, float* o, float* lse,
                             void* stream) {
  const DiagonalBand band = Impl::band_for(shape, mask);
  const RowsShape rows = output_rows(shape);
  if (band.kind == BandKind::empty) {
    fill_empty_rows_cuda(rows, shape.q_tokens, o, lse, stream);
    return;
  }
  Impl::ensure(impl_->scratch_o, bytes16(shape.q_elements()), stream);
  impl_->run_forward(shape, band, dtype, q, k, v, impl_->scratch_o.data(), lse, stream);
  convert_to_f32_cuda(impl_->scratch_o.data(), o, shape.q_elements(), dtype, stream);
  fill_empty_rows_cuda(rows, band.skipped_q_rows, o, lse, stream);
}

void CudnnAttention::backward(const BlockShape& shape, const PositionMask& mask, DType dtype,
                              const void* q, const void* k, const void* v, const float* o_final,
                              const void* d_o, const float* lse, float* dq, float* dk, float* dv,
                              void* stream) {
  const DiagonalBand band = Impl::band_for(shape, mask);
  if (band.kind == BandKind::empty) return;  // no visible pair: nothing to add
  Impl& m = *impl_;
  Impl::ensure(m.scratch_o, bytes16(shape.q_elements()), stream);
  Impl::ensure(m.scratch_dq, bytes16(shape.q_elements()), stream);
  Impl::ensure(m.scratch_dk, bytes16(shape.kv_elements()), stream);
  Impl::ensure(m.scratch_dv, bytes16(shape.kv_elements()), stream);
  convert_from_f32_cuda(o_final, m.scratch_o.data(), shape.q_elements(), dtype, stream);
  if (band.skipped_q_rows > 0) {  // cuDNN leaves the skipped rows of dQ alone: they add 0
    cuda_require(cudaMemsetAsync(m.scratch_dq.data(), 0, bytes16(shape.q_elements()),
                                 static_cast<cudaStream_t>(stream)),
                 "cudaMemsetAsync");
  }
  m.run_backward(shape, band, dtype, q, k, v, m.scratch_o.data(), d_o, lse, m.scratch_dq.data(),
                 m.scratch_dk.data(), m.scratch_dv.data(), stream);
  add_converted_f32_cuda(m.scratch_dq.data(), dq, shape.q_elements(), dtype, stream);
  add_converted_f32_cuda(m.scratch_dk.data(), dk, shape.kv_elements(), dtype, stream);
  add_converted_f32_cuda(m.scratch_dv.data(), dv, shape.kv_elements(), dtype, stream);
}

void CudnnAttention::forward_native(const BlockShape& shape, const PositionMask& mask, DType dtype,
                                    const void* q, const void* k, const void* v, void* o16,
                                    float* lse, void* stream) {
  const DiagonalBand band = Impl::band_for(shape, mask);
  if (band.kind == BandKind::empty) throw std::invalid_argument("forward_native: empty block");
  impl_->run_forward(shape, band, dtype, q, k, v, o16, lse, stream);
}

void CudnnAttention::backward_native(const BlockShape& shape, const PositionMask& mask, DType dtype,
                                     const void* q, const void* k, const void* v, const void* o16,
                                     const void* d_o, const float* lse, void* dq16, void* dk16,
                                     void* dv16, void* stream) {
  const DiagonalBand band = Impl::band_for(shape, mask);
  if (band.kind == BandKind::empty) throw std::invalid_argument("backward_native: empty block");
  impl_->run_backward(shape, band, dtype, q, k, v, o16, d_o, lse, dq16, dk16, dv16, stream);
}

}  // namespace tilesim::kernels
