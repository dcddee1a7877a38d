// Packed document lengths for `attention.documents: {distribution: FILE.csv, seed: N}`.
//
// The CSV holds bins `min_tokens,max_tokens,document_share` ('#' lines are comments, the first
// other line is that header): a document falls in a bin with probability share / sum(shares)
// and its length is then uniform over [min_tokens, max_tokens]. Documents are drawn until they
// fill seq_len; the last one is truncated to fit.
//
// The draws are portable (no std::*_distribution): one splitmix64 stream seeded with N
// (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
// z = (z ^ z>>27) * 0x94D049BB133111EB; out = z ^ z>>31), two outputs per document: the first
// as u = (out >> 11) * 2^-53 picks the bin (first bin whose cumulative share exceeds
// u * total), the second picks the length min + out mod (max - min + 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

struct LengthBin {
  std::int64_t min_tokens = 1;
  std::int64_t max_tokens = 1;
  double document_share = 0.0;
};

// Throws InputError naming the CSV file, line and column for a malformed file.
std::vector<LengthBin> read_length_distribution(const std::string& csv_path);

std::vector<std::int64_t> sample_packed_lengths(const std::vector<LengthBin>& bins,
                                                std::int64_t seq_len, std::uint64_t seed);

// The splitmix64 generator above (exposed for the tests that check it against its published
// first outputs).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();

 private:
  std::uint64_t state_;
};

}  // namespace tilesim
