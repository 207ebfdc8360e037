// Where plugins are looked for and which files count as plugins.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::plugins {

// True for a plugin library name on this platform: libampx_backend_<x>.so
// (Linux), .so or .dylib (macOS), [lib]ampx_backend_<x>.dll (Windows), with a
// non-empty <x>.
bool is_plugin_file_name(std::string_view file_name);

// The <x> of a plugin file name ("" if it is not one). Only a hint: the
// plugin's own plugin_name is what counts once it is loaded.
std::string plugin_name_hint(const std::filesystem::path& file);

// The plugin files directly in `dir`, sorted by file name. A directory that
// does not exist (or cannot be read) yields none.
std::vector<std::filesystem::path> list_plugin_files(const std::filesystem::path& dir);

// Splits a PATH-like list (':' separated, ';' on Windows); empty entries are
// dropped.
std::vector<std::filesystem::path> split_path_list(std::string_view list);

// Splits a comma-separated list, trimming spaces; empty entries are dropped.
std::vector<std::string> split_name_list(std::string_view list);

// The plugin directory of the build tree (AMPX_PLUGIN_BUILD_DIR at configure
// time) and of an install (../<libdir>/ampx/plugins next to the running
// executable; omitted if the executable's location is unknown).
std::vector<std::filesystem::path> default_plugin_dirs();

}  // namespace ampx::plugins
