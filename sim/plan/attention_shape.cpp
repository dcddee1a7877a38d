#include "sim/plan/attention_shape.hpp"

#include <utility>

namespace tilesim {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::bf16:
      return "bf16";
    case DType::fp16:
      return "fp16";
    case DType::fp32:
      return "fp32";
  }
  return "?";
}

std::string_view to_string(PassSelection pass) {
  switch (pass) {
    case PassSelection::forward:
      return "forward";
    case PassSelection::backward:
      return "backward";
    case PassSelection::both:
      return "both";
  }
  return "?";
}

void AttentionShape::set_mask(AttentionMask m) {
  causal = m.hides_future();
  mask = std::move(m);
}

void AttentionShape::set_causal(bool on) {
  AttentionMask m;
  m.kind = on ? AttentionMaskKind::causal : AttentionMaskKind::full;
  set_mask(std::move(m));
}

int element_bytes(DType dtype) { return dtype == DType::fp32 ? 4 : 2; }

namespace {
// Elements of a query-side tensor of `dim` per head, and of K+V.
double query_elements(const AttentionShape& s, std::int64_t tokens, int dim) {
  return static_cast<double>(s.batch) * static_cast<double>(tokens) * s.heads * dim;
}
double dkv_elements(const AttentionShape& s, std::int64_t tokens) {
  return static_cast<double>(s.batch) * static_cast<double>(tokens) * s.kv_heads *
         (s.head_dim + s.value_dim());
}
double o_elements(const AttentionShape& s, std::int64_t tokens) {
  return query_elements(s, tokens, s.value_dim());
}
double dq_elements(const AttentionShape& s, std::int64_t tokens) {
  return query_elements(s, tokens, s.head_dim);
}
}  // namespace

double AttentionShape::q_bytes(std::int64_t tokens) const {
  return dq_elements(*this, tokens) * element_bytes(dtype);
}

double AttentionShape::d_o_bytes(std::int64_t tokens) const {
  return o_elements(*this, tokens) * element_bytes(dtype);
}

double AttentionShape::kv_bytes(std::int64_t tokens) const {
  return dkv_elements(*this, tokens) * element_bytes(dtype);
}

double AttentionShape::dq_accumulator_bytes(std::int64_t tokens) const {
  return dq_elements(*this, tokens) * element_bytes(partial_dtype);
}

double AttentionShape::dq_output_bytes(std::int64_t tokens) const {
  return dq_elements(*this, tokens) * element_bytes(finished_dtype());
}

double AttentionShape::o_accumulator_bytes(std::int64_t tokens) const {
  return o_elements(*this, tokens) * element_bytes(partial_dtype);
}

double AttentionShape::o_output_bytes(std::int64_t tokens) const {
  return o_elements(*this, tokens) * element_bytes(finished_dtype());
}

double AttentionShape::dkv_accumulator_bytes(std::int64_t tokens) const {
  return dkv_elements(*this, tokens) * element_bytes(partial_dtype);
}

double AttentionShape::dkv_output_bytes(std::int64_t tokens) const {
  return dkv_elements(*this, tokens) * element_bytes(finished_dtype());
}

double AttentionShape::lse_bytes(std::int64_t tokens) const {
  return static_cast<double>(batch) * static_cast<double>(tokens) * heads * 4.0;
}

}  // namespace tilesim
