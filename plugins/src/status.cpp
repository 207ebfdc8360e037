#include <ampx/plugins/status.hpp>

#include <string>
#include <utility>

namespace ampx::plugins {
namespace {

// One line: control characters (line breaks, tabs) become spaces, runs of
// spaces collapse, both ends are trimmed.
std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const bool space = c == ' ' || (static_cast<unsigned char>(c) < 0x20) || c == 0x7f;
    if (space) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::string to_string(ampx_status_code code) {
  switch (code) {
    case AMPX_STATUS_OK:
      return "OK";
    case AMPX_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case AMPX_STATUS_UNSUPPORTED:
      return "UNSUPPORTED";
    case AMPX_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case AMPX_STATUS_UNAVAILABLE:
      return "UNAVAILABLE";
    case AMPX_STATUS_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN(" + std::to_string(static_cast<long long>(code)) + ")";
}

PluginError::PluginError(std::string plugin, std::string operation, ampx_status_code code,
                         std::string plugin_message)
    : std::runtime_error(plugin + ": " + operation + ": " + one_line(plugin_message)),
      detail_(std::make_shared<const Detail>(
          Detail{std::move(plugin), std::move(operation), code, one_line(plugin_message)})) {}

Status::Status(Status&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)), status_(std::exchange(other.status_, nullptr)) {}

Status& Status::operator=(Status&& other) noexcept {
  if (this != &other) {
    reset();
    api_ = std::exchange(other.api_, nullptr);
    status_ = std::exchange(other.status_, nullptr);
  }
  return *this;
}

ampx_status_code Status::code() const noexcept {
  if (status_ == nullptr) return AMPX_STATUS_OK;
  const ampx_status_code code = api_->status_code(status_);
  return code == AMPX_STATUS_OK ? AMPX_STATUS_INTERNAL : code;
}

std::string Status::message() const {
  if (status_ == nullptr) return {};
  const char* text = api_->status_message(status_);
  std::string line = text != nullptr ? one_line(text) : std::string();
  return line.empty() ? std::string("(no message)") : line;
}

void Status::reset() noexcept {
  if (status_ != nullptr) api_->status_destroy(status_);
  status_ = nullptr;
}

void Status::throw_if_error(std::string_view plugin, std::string_view operation) {
  if (ok()) return;
  const ampx_status_code status_code = code();
  std::string text = message();
  reset();
  throw PluginError(std::string(plugin), std::string(operation), status_code, std::move(text));
}

}  // namespace ampx::plugins
