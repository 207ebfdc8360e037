#include "progress.hpp"

#include <nanobind/stl/string.h>

namespace ampx::python {

Progress::Progress(nb::object spec, std::string label) {
  if (spec.is_none()) return;
  if (nb::isinstance<nb::bool_>(spec)) {
    if (nb::cast<bool>(spec)) bar_.emplace(std::move(label));
    return;
  }
  if (!PyCallable_Check(spec.ptr()))
    throw TypeFailure("progress must be True, False, None or a callable (done, total, what)");
  callback_ = std::move(spec);
}

void Progress::update(int done, int total, const std::string& what) {
  if (bar_) bar_->update(done, total, what);
  if (callback_.is_valid()) {
    nb::gil_scoped_acquire acquire;
    callback_(done, total, what);
  }
}

void Progress::finish(const std::string& result) {
  if (bar_) bar_->finish(result);
}

}  // namespace ampx::python
