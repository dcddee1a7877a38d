// 64-bit FNV-1a (Fowler-Noll-Vo; offset basis 0xcbf29ce484222325, prime 0x100000001b3): a
// fast, stable, non-cryptographic fingerprint, for identity checks on outputs and plans
// (same bytes in the same order give the same value on every platform of one endianness).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tilesim {

class Fnv1a {
 public:
  void add_bytes(const unsigned char* bytes, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      hash_ ^= bytes[i];
      hash_ *= kPrime;
    }
  }
  template <typename T>
  requires std::is_trivially_copyable_v<T>
  void add(const T& value) {
    add_bytes(reinterpret_cast<const unsigned char*>(&value), sizeof value);
  }
  // Length first, so that ("ab", "c") and ("a", "bc") differ.
  void add(std::string_view text) {
    add(static_cast<std::uint64_t>(text.size()));
    add_bytes(reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  std::uint64_t value() const { return hash_; }

 private:
  static constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace tilesim
