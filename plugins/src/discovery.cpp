#include <ampx/plugins/discovery.hpp>

#include <spdlog/spdlog.h>
#include <boost/dll/runtime_symbol_info.hpp>

#include <algorithm>
#include <system_error>

#ifndef AMPX_PLUGIN_BUILD_DIR
#define AMPX_PLUGIN_BUILD_DIR ""
#endif
#ifndef AMPX_PLUGIN_INSTALL_REL_DIR
#define AMPX_PLUGIN_INSTALL_REL_DIR "../lib/ampx/plugins"
#endif

namespace ampx::plugins {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kStem = "ampx_backend_";

#if defined(_WIN32)
constexpr std::string_view kSuffixes[] = {".dll"};
constexpr bool kLibPrefixRequired = false;
constexpr char kPathSeparator = ';';
#elif defined(__APPLE__)
// CMake MODULE libraries end in .so on macOS too.
constexpr std::string_view kSuffixes[] = {".dylib", ".so"};
constexpr bool kLibPrefixRequired = true;
constexpr char kPathSeparator = ':';
#else
constexpr std::string_view kSuffixes[] = {".so"};
constexpr bool kLibPrefixRequired = true;
constexpr char kPathSeparator = ':';
#endif

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

// The <x> of [lib]ampx_backend_<x><suffix>, or "" if the name does not match.
std::string_view name_part(std::string_view file_name) {
  if (file_name.starts_with("lib")) {
    file_name.remove_prefix(3);
  } else if (kLibPrefixRequired) {
    return {};
  }
  if (!file_name.starts_with(kStem)) return {};
  file_name.remove_prefix(kStem.size());
  for (std::string_view suffix : kSuffixes) {
    if (file_name.size() > suffix.size() && file_name.ends_with(suffix)) {
      return file_name.substr(0, file_name.size() - suffix.size());
    }
  }
  return {};
}

}  // namespace

bool is_plugin_file_name(std::string_view file_name) {
  return !name_part(file_name).empty();
}

std::string plugin_name_hint(const std::filesystem::path& file) {
  return std::string(name_part(file.filename().string()));
}

std::vector<std::filesystem::path> list_plugin_files(const std::filesystem::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
      spdlog::debug("plugin directory {} does not exist", dir.string());
    } else {
      spdlog::warn("cannot read plugin directory {}: {}", dir.string(), ec.message());
    }
    return files;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    if (!is_plugin_file_name(path.filename().string())) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;  // follows symlinks
    files.push_back(path);
  }
  if (ec) {
    spdlog::warn("error while reading plugin directory {}: {}", dir.string(), ec.message());
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return files;
}

std::vector<std::filesystem::path> split_path_list(std::string_view list) {
  std::vector<fs::path> dirs;
  while (!list.empty()) {
    const auto end = list.find(kPathSeparator);
    const std::string_view entry = list.substr(0, end);
    if (!entry.empty()) dirs.emplace_back(entry);
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return dirs;
}

std::vector<std::string> split_name_list(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const auto end = list.find(',');
    const std::string_view entry = trim(list.substr(0, end));
    if (!entry.empty()) names.emplace_back(entry);
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return names;
}

std::vector<std::filesystem::path> default_plugin_dirs() {
  std::vector<fs::path> dirs;
  if (std::string_view(AMPX_PLUGIN_BUILD_DIR).size() > 0) dirs.emplace_back(AMPX_PLUGIN_BUILD_DIR);
  boost::dll::fs::error_code ec;
  const fs::path program = boost::dll::program_location(ec);
  if (ec || program.empty()) {
    spdlog::debug("executable location unknown ({}): no install plugin directory", ec.message());
  } else {
    dirs.push_back((program.parent_path() / AMPX_PLUGIN_INSTALL_REL_DIR).lexically_normal());
  }
  return dirs;
}

}  // namespace ampx::plugins
