#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/private_temp_dir.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace ampx::fileio {

PrivateTempDir::PrivateTempDir() {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / "ampx-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    fail_errno(base, "cannot make a private directory", errno);
  path_ = templ;
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ampx::fileio
