// Shapes, layouts and masks shared by every attention block kernel (CPU and CUDA).
//
// Layout (all row-major, no padding):
//   Q chunk, dQ    : [batch][q_tokens][heads][head_dim]
//   O chunk, dO    : [batch][q_tokens][heads][v_dim]
//   K chunk, dK    : [batch][kv_tokens][kv_heads][head_dim]
//   V chunk, dV    : [batch][kv_tokens][kv_heads][v_dim]
// head_dim is the q/k head dim (QK^T contracts over it), v_dim the v head dim (MLA: 192 and
// 128); v_dim = head_dim unless v_head_dim is set.
//   LSE (and D = rowsum(dO*O)): [batch][heads][q_tokens], fp32
// GQA: query head h reads kv head h / (heads / kv_heads).
//
// Positions: token i of a chunk sits at absolute position start + i * stride (stride 1 is a
// contiguous chunk, stride P a striped layout). With MaskKind::causal a query at position pq
// sees a key at position pk iff lowest(pq) <= pk <= pq, where lowest(pq) is the larger of
// pq - window + 1 (window > 0: a sliding window of `window` tokens) and the first position of
// pq's document (document_starts: the ascending first positions of the packed documents; none
// = one document). MaskKind::full masks nothing. Positions grow with the index, so the keys a
// query sees are one index range of the chunk (visible_key_range).
//
// Scores are s = (q . k) * scale with scale = 1 / sqrt(head_dim); LSE is the natural-log
// sum-exp of the visible scores of a row. A row that sees no key has O = 0 and LSE = -inf.
#pragma once

#include <cstdint>

namespace tilesim::kernels {

enum class MaskKind { full, causal };

// Absolute token positions of one chunk: position(i) = start + i * stride, stride >= 1.
struct TokenPositions {
  std::int64_t start = 0;
  std::int64_t stride = 1;
  constexpr std::int64_t at(std::int64_t index) const { return start + index * stride; }
};

struct PositionMask {
  MaskKind kind = MaskKind::full;
  TokenPositions q;                               // positions of the query chunk's tokens
  TokenPositions kv;                              // positions of the key/value chunk's tokens
  std::int64_t window = 0;                        // causal only; 0 = no window
  const std::int64_t* document_starts = nullptr;  // causal only; not owned
  std::int64_t document_count = 0;

  // The lowest key position query position pq sees (causal).
  constexpr std::int64_t lowest_visible(std::int64_t pq) const {
    std::int64_t lowest = window > 0 ? pq - window + 1 : 0;
    // Binary search for the last document start <= pq.
    std::int64_t lo = 0, hi = document_count;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (document_starts[mid] <= pq)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo > 0 && document_starts[lo - 1] > lowest) lowest = document_starts[lo - 1];
    return lowest;
  }
  constexpr bool visible(std::int64_t q_index, std::int64_t kv_index) const {
    if (kind == MaskKind::full) return true;
    const std::int64_t pq = q.at(q_index), pk = kv.at(kv_index);
    return pk <= pq && pk >= lowest_visible(pq);
  }
  // True when only position order matters (what the CUDA kernels and cuDNN bands support).
  constexpr bool plain() const {
    return kind == MaskKind::full || (window == 0 && document_count == 0);
  }
};

// Keys [first, end) of a KV chunk (end - first >= 0).
struct KeyRange {
  std::int64_t first = 0;
  std::int64_t end = 0;
  constexpr std::int64_t count() const { return end - first; }
};

// One attention block: a Q chunk of q_tokens against a KV chunk of kv_tokens.
struct BlockShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t head_dim = 64;
  std::int64_t q_tokens = 1;
  std::int64_t kv_tokens = 1;
  std::int64_t v_head_dim = 0;  // 0: the v head dim is head_dim

  constexpr std::int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  constexpr std::int64_t group_size() const { return heads / kv_heads; }
  constexpr std::int64_t q_elements() const { return batch * q_tokens * heads * head_dim; }
  constexpr std::int64_t o_elements() const { return batch * q_tokens * heads * v_dim(); }
  constexpr std::int64_t k_elements() const { return batch * kv_tokens * kv_heads * head_dim; }
  constexpr std::int64_t v_elements() const { return batch * kv_tokens * kv_heads * v_dim(); }
  // K or V elements where both have head_dim (the CUDA kernels, which require v_dim = head_dim).
  constexpr std::int64_t kv_elements() const { return k_elements(); }
  constexpr std::int64_t lse_elements() const { return batch * heads * q_tokens; }
};

// The rows of one output chunk (O and LSE), used by merges.
struct RowsShape {
  std::int64_t batch = 1;
  std::int64_t tokens = 1;
  std::int64_t heads = 1;
  std::int64_t head_dim = 64;  // of O: the v head dim

  constexpr std::int64_t o_elements() const { return batch * tokens * heads * head_dim; }
  constexpr std::int64_t lse_elements() const { return batch * heads * tokens; }
};

constexpr RowsShape output_rows(const BlockShape& s) {
  return RowsShape{s.batch, s.q_tokens, s.heads, s.v_dim()};
}

// Throws std::invalid_argument when a shape or mask is unusable (non-positive sizes, heads not
// a multiple of kv_heads, stride < 1).
void validate_block(const BlockShape& shape, const PositionMask& mask);
void validate_rows(const RowsShape& rows);

// Number of (query, key) pairs of the block that the mask leaves visible (per batch and head).
std::int64_t visible_pairs(const BlockShape& shape, const PositionMask& mask);

// Forward FLOPs of the block counting only visible pairs:
// 2 * batch * pairs * heads * (head_dim + v_dim).
double forward_flops(const BlockShape& shape, const PositionMask& mask);

// The keys of the KV chunk visible to query q_index: one index range (positions grow with the
// index), empty when none is.
KeyRange visible_key_range(const BlockShape& shape, const PositionMask& mask, std::int64_t q_index);

}  // namespace tilesim::kernels
