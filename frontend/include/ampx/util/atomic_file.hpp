// Writing a file so that no reader ever sees half of it: the bytes go to a
// temporary name in the same directory, which is renamed over the target.
#pragma once

#include <string>
#include <string_view>

namespace ampx {

// Throws std::runtime_error "PATH: cannot write (reason)" and leaves no
// temporary behind.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace ampx
