// Plugin status objects on the host side: an RAII owner for `ampx_status*` and
// the exception a failed plugin call turns into.
#pragma once

#include <ampx/backend_api.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampx::plugins {

// "OK", "INVALID_ARGUMENT", ...; "UNKNOWN(<n>)" for a value outside the enum.
std::string to_string(ampx_status_code code);

// A plugin call failed. what() is exactly one line:
//   "<plugin>: <operation>: <plugin message>"
// (line breaks in the plugin's message are replaced by spaces).
class PluginError : public std::runtime_error {
 public:
  PluginError(std::string plugin, std::string operation, ampx_status_code code,
              std::string plugin_message);

  const std::string& plugin() const noexcept { return detail_->plugin; }
  const std::string& operation() const noexcept { return detail_->operation; }
  ampx_status_code code() const noexcept { return detail_->code; }
  // The plugin's own message, as sanitised into what().
  const std::string& plugin_message() const noexcept { return detail_->message; }

 private:
  struct Detail {
    std::string plugin;
    std::string operation;
    ampx_status_code code;
    std::string message;
  };
  // Shared so that copying the exception cannot throw.
  std::shared_ptr<const Detail> detail_;
};

// A plugin let a C++ exception cross the C ABI (backend_api.h forbids it):
// caught at the call, so that it costs that plugin, never the host. what():
//   "<plugin>: <operation>: threw a C++ exception across the C ABI (<what>)"
class PluginThrew : public PluginError {
 public:
  PluginThrew(std::string plugin, std::string operation, std::string what)
      : PluginError(std::move(plugin), std::move(operation), AMPX_STATUS_INTERNAL,
                    "threw a C++ exception across the C ABI (" + std::move(what) + ")") {}
};

// Owns one non-NULL `ampx_status*` returned by a plugin and releases it with
// that plugin's status_destroy. A default or NULL Status means success.
// `api` is borrowed: a Status must not outlive the plugin that produced it
// (it never does in practice: statuses are converted right after the call).
class Status {
 public:
  Status() noexcept = default;
  Status(const ampx_plugin_api& api, ampx_status* status) noexcept : api_(&api), status_(status) {}
  Status(Status&& other) noexcept;
  Status& operator=(Status&& other) noexcept;
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  ~Status() { reset(); }

  bool ok() const noexcept { return status_ == nullptr; }
  explicit operator bool() const noexcept { return ok(); }
  ampx_status* get() const noexcept { return status_; }

  // AMPX_STATUS_OK when ok(). A non-NULL status that claims OK is reported as
  // INTERNAL: non-NULL always means failure.
  ampx_status_code code() const noexcept;
  // The plugin's message ("" when ok()), one line; "(no message)" when the
  // plugin gives none.
  std::string message() const;

  // Releases the status now (status_destroy).
  void reset() noexcept;

  // Does nothing when ok(); otherwise releases the status and throws
  // PluginError(plugin, operation, code(), message()).
  void throw_if_error(std::string_view plugin, std::string_view operation);

 private:
  const ampx_plugin_api* api_ = nullptr;
  ampx_status* status_ = nullptr;
};

}  // namespace ampx::plugins
