// Which (query, key) token pairs attend, and how many pairs of two token sets do.
//
// Positions are absolute token indices 0 .. S-1 of the (packed) sequence. A query at
// position i sees a key at position j iff
//   full:           always
//   causal:         j <= i
//   sliding_window: i - W < j <= i                    (W = window_tokens, causal within W)
//   documents:      doc(j) == doc(i) and j <= i      (causal inside each packed document)
// Documents are given by their first positions document_starts = [0, s1, s2, ...] (ascending);
// document k holds [s_k, s_{k+1}) and the last one ends at S.
//
// Pair counts are closed forms. A token set here is an arithmetic run of positions
// start + a*stride, a = 0 .. count-1 (a contiguous block has stride 1, a striped block stride
// N). For two runs of one stride s, "j <= i - d" is b - a <= t with t = floor((qs - ks - d)/s),
// and the number of (a, b) in [a0, a1) x [b0, b1) with b <= a + t is a sum of a clamped linear
// function: sum_a clamp(a + t + 1 - b0, 0, L), L = b1 - b0, which is F(a1 + u) - F(a0 + u) with
// u = t + 1 - b0 and F(n) = sum_{x < n} clamp(x, 0, L) = n(n-1)/2 for 0 <= n <= L + 1 and
// L(L+1)/2 + (n-L-1)L beyond. Then
//   causal pairs = N(d = 0); window pairs = N(0) - N(W); document pairs = sum over the documents
//   of N(0) on the two runs cut to the document (a run cut to [s, e) is again a run).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tilesim {

enum class AttentionMaskKind { full, causal, sliding_window, documents };

std::string_view to_string(AttentionMaskKind kind);

// Positions start + a*stride for a = 0 .. count-1.
struct PositionRun {
  std::int64_t start = 0;
  std::int64_t stride = 1;
  std::int64_t count = 0;
};

struct AttentionMask {
  AttentionMaskKind kind = AttentionMaskKind::full;
  std::int64_t window_tokens = 0;             // sliding_window: W >= 1
  std::vector<std::int64_t> document_starts;  // documents: [0, s1, ...], ascending

  bool hides_future() const { return kind != AttentionMaskKind::full; }
  // A window or documents may leave chunk pairs without a pair that attends (full and causal
  // over zigzag chunks never do): generators then move a chunk only to the ranks that read it.
  bool may_leave_pairs_empty() const {
    return kind == AttentionMaskKind::sliding_window || kind == AttentionMaskKind::documents;
  }
  bool visible(std::int64_t q_position, std::int64_t kv_position) const;
  // First position of the document holding `position` (0 unless documents).
  std::int64_t document_start(std::int64_t position) const;
  // Number of (query, key) pairs that attend; both runs must have the same stride.
  double pairs(const PositionRun& q, const PositionRun& kv) const;
  friend bool operator==(const AttentionMask&, const AttentionMask&) = default;
};

// The documents mask of packed document lengths (each >= 1).
AttentionMask documents_mask(const std::vector<std::int64_t>& lengths);

}  // namespace tilesim
