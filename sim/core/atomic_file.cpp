#include "sim/core/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "sim/core/input_error.hpp"

namespace tilesim {

void write_file_atomically(const std::string& path, std::string_view content,
                           const std::string& key) {
  // The process id keeps two concurrent writers of one target from sharing a temporary file.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, 0, key, "a file in a writable directory");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError(path, 0, key, "room to write the whole file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw InputError(path, 0, key, "a path that can be replaced: " + ec.message());
  }
}

}  // namespace tilesim
