// Shared by the libFuzzer targets (tests/fuzz): the readers under test take
// a path, so every input is written to one file in a private directory
// first; and one rule for what a reader may throw.
#pragma once

#include <ampx/fileio/private_temp_dir.hpp>

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <stdexcept>
#include <string_view>

namespace ampx::fuzz {

// The per-process scratch directory; emptied before every input, so that
// files a reader leaves behind (a database moved aside) never accumulate.
inline const std::filesystem::path& scratch_dir() {
  static fileio::PrivateTempDir dir;
  return dir.path();
}

// Every target's LLVMFuzzerInitialize: warnings about rejected inputs
// would only slow the fuzzer down.
inline void quiet_logs() {
  spdlog::set_level(spdlog::level::off);
}

// The current input, for telling an echo of it from a library's own text.
inline std::string_view& current_input() {
  static std::string_view input;
  return input;
}

inline std::filesystem::path write_input(const uint8_t* data, size_t size,
                                         std::string_view file_name) {
  const std::filesystem::path& dir = scratch_dir();
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    std::filesystem::remove_all(entry.path());
  current_input() = std::string_view(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path path = dir / file_name;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// A message must be about the input, never the standard library's or a
// parser's internals (the CLI's error_message() hides those, but only as a
// last resort: they mean an unchecked case). Names echoed from the input
// may hold anything, control characters included: the CLI escapes them at
// its one exit (error_message()), so only markers the input does not hold
// count.
inline bool is_internal_text(std::string_view what) {
  if (what.empty()) return true;
  for (const std::string_view marker :
       {"_M_", "std::", "vector::", "basic_string", "[json.exception", "bad_alloc",
        // the importer's last resort for an exception it did not expect (a
        // protobuf CHECK on an index): a case its own checks missed
        "an attribute or input is out of range"}) {
    if (what.find(marker) != std::string_view::npos &&
        current_input().find(marker) == std::string_view::npos)
      return true;
  }
  return false;
}

[[noreturn]] inline void finding(const char* kind, const char* what) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", kind, what);
  std::abort();
}

// Runs `read`. A reader may reject its input with std::runtime_error or
// std::invalid_argument carrying a message of its own; any other exception
// (std::bad_alloc, std::length_error, std::out_of_range, a JSON library
// exception) or an internal text is a finding: libFuzzer stops on the abort
// and keeps the input.
inline void expect_clean_rejection(const std::function<void()>& read) {
  try {
    read();
  } catch (const std::runtime_error& e) {
    if (is_internal_text(e.what())) finding("runtime_error with internal text", e.what());
  } catch (const std::invalid_argument& e) {
    if (is_internal_text(e.what())) finding("invalid_argument with internal text", e.what());
  } catch (const std::bad_alloc&) {
    finding("std::bad_alloc", "an allocation was not bounded");
  } catch (const std::exception& e) {
    finding("unexpected exception", e.what());
  } catch (...) {
    finding("unexpected exception", "not a std::exception");
  }
}

}  // namespace ampx::fuzz
