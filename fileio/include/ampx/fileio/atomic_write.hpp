// Writing an output file so that no reader ever sees half of it, and so
// that nothing but a regular file is ever replaced:
//  - a regular file (or a symbolic link to one, which stays a link) is
//    replaced whole: the bytes go to a temporary file of a random name in
//    the target's directory, created with O_CREAT | O_EXCL | O_NOFOLLOW
//    (a file or link planted under that name is never written through),
//    flushed with fsync, given the old file's permissions, then renamed
//    over the target;
//  - a character device or FIFO (/dev/null, /dev/stdout, a pipe) is written
//    in place: it is never replaced by a regular file;
//  - a directory, block device or socket is refused.
#pragma once

#include <filesystem>
#include <string_view>

namespace ampx::fileio {

// Throws FileError "PATH: ..." and leaves no temporary file behind.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace ampx::fileio
