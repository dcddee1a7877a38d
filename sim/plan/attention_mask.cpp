#include "sim/plan/attention_mask.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tilesim {
namespace {

// sum_{x < n} clamp(x, 0, len)  (see the header).
std::int64_t clamped_prefix(std::int64_t n, std::int64_t len) {
  if (n <= 0) return 0;
  if (n <= len + 1) return n * (n - 1) / 2;
  return len * (len + 1) / 2 + (n - len - 1) * len;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

// Pairs with key position <= query position - d of two runs of one stride.
std::int64_t pairs_at_least(const PositionRun& q, const PositionRun& kv, std::int64_t d) {
  if (q.count <= 0 || kv.count <= 0) return 0;
  const std::int64_t t = floor_div(q.start - kv.start - d, q.stride);
  const std::int64_t u = t + 1;  // b0 = 0
  return clamped_prefix(q.count + u, kv.count) - clamped_prefix(u, kv.count);
}

// The part of a run inside positions [begin, end).
PositionRun cut(const PositionRun& run, std::int64_t begin, std::int64_t end) {
  const std::int64_t a0 = std::max<std::int64_t>(0, ceil_div(begin - run.start, run.stride));
  const std::int64_t a1 = std::min(run.count, ceil_div(end - run.start, run.stride));
  if (a1 <= a0) return {run.start, run.stride, 0};
  return {run.start + a0 * run.stride, run.stride, a1 - a0};
}

std::int64_t last(const PositionRun& run) { return run.start + (run.count - 1) * run.stride; }

}  // namespace

std::string_view to_string(AttentionMaskKind kind) {
  switch (kind) {
    case AttentionMaskKind::full:
      return "full";
    case AttentionMaskKind::causal:
      return "causal";
    case AttentionMaskKind::sliding_window:
      return "sliding_window";
    case AttentionMaskKind::documents:
      return "documents";
  }
  return "?";
}

std::int64_t AttentionMask::document_start(std::int64_t position) const {
  if (kind != AttentionMaskKind::documents || document_starts.empty()) return 0;
  const auto it = std::upper_bound(document_starts.begin(), document_starts.end(), position);
  return it == document_starts.begin() ? 0 : *(it - 1);
}

bool AttentionMask::visible(std::int64_t q_position, std::int64_t kv_position) const {
  switch (kind) {
    case AttentionMaskKind::full:
      return true;
    case AttentionMaskKind::causal:
      return kv_position <= q_position;
    case AttentionMaskKind::sliding_window:
      return kv_position <= q_position && kv_position > q_position - window_tokens;
    case AttentionMaskKind::documents:
      return kv_position <= q_position && kv_position >= document_start(q_position);
  }
  return false;
}

double AttentionMask::pairs(const PositionRun& q, const PositionRun& kv) const {
  if (q.stride != kv.stride) throw std::invalid_argument("mask pairs: runs of different strides");
  if (q.count <= 0 || kv.count <= 0) return 0.0;
  switch (kind) {
    case AttentionMaskKind::full:
      return static_cast<double>(q.count) * static_cast<double>(kv.count);
    case AttentionMaskKind::causal:
      return static_cast<double>(pairs_at_least(q, kv, 0));
    case AttentionMaskKind::sliding_window:
      return static_cast<double>(pairs_at_least(q, kv, 0) - pairs_at_least(q, kv, window_tokens));
    case AttentionMaskKind::documents: {
      // Only documents that overlap both runs' position hulls can hold a pair: those that start
      // at or before the earlier last position and end after the later first position.
      const std::int64_t lo = std::max(q.start, kv.start);
      const std::int64_t hi = std::min(last(q), last(kv));
      auto it = std::upper_bound(document_starts.begin(), document_starts.end(), lo);
      if (it != document_starts.begin()) --it;
      std::int64_t total = 0;
      for (; it != document_starts.end() && *it <= hi; ++it) {
        const std::int64_t begin = *it;
        const std::int64_t end = it + 1 == document_starts.end()
                                     ? std::numeric_limits<std::int64_t>::max() / 4
                                     : *(it + 1);
        total += pairs_at_least(cut(q, begin, end), cut(kv, begin, end), 0);
      }
      return static_cast<double>(total);
    }
  }
  return 0.0;
}

AttentionMask documents_mask(const std::vector<std::int64_t>& lengths) {
  AttentionMask mask;
  mask.kind = AttentionMaskKind::documents;
  std::int64_t start = 0;
  for (std::int64_t len : lengths) {
    if (len < 1) throw std::invalid_argument("documents mask: every length must be >= 1");
    mask.document_starts.push_back(start);
    start += len;
  }
  return mask;
}

}  // namespace tilesim
