// Writes an output file whole or not at all: the content goes to a temporary file next to the
// target (same directory, so the same file system), which is then renamed over it. A reader
// never sees half a file, and a failure leaves any earlier file as it was.
#pragma once

#include <string>
#include <string_view>

namespace tilesim {

// Throws InputError naming `path` and `key` (the option that named the file) when the
// directory cannot be written.
void write_file_atomically(const std::string& path, std::string_view content,
                           const std::string& key);

}  // namespace tilesim
