#include "sim/scenario/document_lengths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "sim/core/input_error.hpp"

namespace tilesim {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(trim(field));
  return fields;
}

std::int64_t parse_count(const std::string& path, int line, const std::string& column,
                         const std::string& text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    throw InputError(path, line, column,
                     fmt::format("expected a token count >= 1, got '{}'", text));
  }
  return v;
}

double parse_share(const std::string& path, int line, const std::string& text) {
  double v = 0.0;
  try {
    std::size_t used = 0;
    v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError(path, line, "document_share",
                     fmt::format("expected a number, got '{}'", text));
  }
  if (!(v >= 0.0)) throw InputError(path, line, "document_share", "expected a share >= 0");
  return v;
}

}  // namespace

std::uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<LengthBin> read_length_distribution(const std::string& csv_path) {
  std::ifstream in(csv_path);
  if (!in) throw InputError(csv_path, 0, "", "cannot open the document-length distribution");
  std::vector<LengthBin> bins;
  std::string raw;
  bool header_seen = false;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const std::string text = trim(raw);
    if (text.empty() || text[0] == '#') continue;
    const std::vector<std::string> f = split_commas(text);
    if (!header_seen) {
      if (f != std::vector<std::string>{"min_tokens", "max_tokens", "document_share"}) {
        throw InputError(csv_path, line, "header",
                         "expected the header min_tokens,max_tokens,document_share");
      }
      header_seen = true;
      continue;
    }
    if (f.size() != 3) {
      throw InputError(csv_path, line, "", fmt::format("expected 3 columns, got {}", f.size()));
    }
    LengthBin bin{parse_count(csv_path, line, "min_tokens", f[0]),
                  parse_count(csv_path, line, "max_tokens", f[1]),
                  parse_share(csv_path, line, f[2])};
    if (bin.max_tokens < bin.min_tokens) {
      throw InputError(csv_path, line, "max_tokens", "expected max_tokens >= min_tokens");
    }
    bins.push_back(bin);
  }
  double total = 0.0;
  for (const LengthBin& b : bins) total += b.document_share;
  if (bins.empty() || !(total > 0.0)) {
    throw InputError(csv_path, line, "document_share",
                     "expected at least one bin with a share > 0");
  }
  return bins;
}

std::vector<std::int64_t> sample_packed_lengths(const std::vector<LengthBin>& bins,
                                                std::int64_t seq_len, std::uint64_t seed) {
  double total = 0.0;
  for (const LengthBin& b : bins) total += b.document_share;
  SplitMix64 rng(seed);
  std::vector<std::int64_t> lengths;
  std::int64_t filled = 0;
  while (filled < seq_len) {
    const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
    std::size_t pick = bins.size() - 1;
    double cumulative = 0.0;
    for (std::size_t i = 0; i < bins.size(); ++i) {
      cumulative += bins[i].document_share;
      if (cumulative > u * total) {
        pick = i;
        break;
      }
    }
    const LengthBin& b = bins[pick];
    const auto span = static_cast<std::uint64_t>(b.max_tokens - b.min_tokens + 1);
    const std::int64_t len = b.min_tokens + static_cast<std::int64_t>(rng.next() % span);
    lengths.push_back(std::min(len, seq_len - filled));
    filled += lengths.back();
  }
  return lengths;
}

}  // namespace tilesim
