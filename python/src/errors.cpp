// ampx.Error (a RuntimeError) and its kinds, raised with the one-line
// message the CLI prints after `ampx: error:` (apps/ampx/error_message.hpp).
//
//   ModelError   the model: a file that is not there or not ONNX, an op or
//                attribute ampx does not take (onnx_io::OnnxError, load)
//   DeviceError  a device or plugin: unknown or skipped device, a plugin
//                call that failed, a plan larger than the memory, a node
//                no device runs (PlacementError)
//   UsageError   a bad argument (std::invalid_argument, the CLI's exit 2);
//                also a ValueError, as Python users expect
//   Error        anything else the Session reports
// A wrong type of argument is a TypeError; nanobind's own conversions keep
// theirs.
#include "bindings.hpp"

#include "error_message.hpp"

#include <ampx/amp/placement.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/onnx/onnx_import.hpp>
#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/status.hpp>

#include <new>

namespace ampx::python {
namespace {

PyObject* g_error = nullptr;
PyObject* g_model_error = nullptr;
PyObject* g_device_error = nullptr;
PyObject* g_usage_error = nullptr;

void raise(PyObject* type, const std::exception& e) {
  PyErr_SetString(type, cli::error_message(e).c_str());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const nb::python_error&) {
    throw;  // nanobind's own, for its translator
  } catch (const nb::builtin_exception&) {
    throw;
  } catch (const nb::cast_error&) {
    throw;
  } catch (const TypeFailure& e) {
    raise(PyExc_TypeError, e);
  } catch (const ModelFailure& e) {
    raise(g_model_error, e);
  } catch (const onnx_io::OnnxError& e) {
    raise(g_model_error, e);
  } catch (const DeviceFailure& e) {
    raise(g_device_error, e);
  } catch (const PlacementError& e) {
    raise(g_device_error, e);
  } catch (const plugins::PluginError& e) {
    raise(g_device_error, e);
  } catch (const plugins::PluginLoadError& e) {
    raise(g_device_error, e);
  } catch (const MemoryError& e) {
    raise(g_device_error, e);
  } catch (const std::invalid_argument& e) {
    raise(g_usage_error, e);
  } catch (const std::bad_alloc& e) {
    raise(PyExc_MemoryError, e);
  } catch (const std::exception& e) {
    raise(g_error, e);
  }
}

}  // namespace

void register_errors(nb::module_& m) {
  g_error =
      PyErr_NewExceptionWithDoc("ampx.Error", "A failure ampx reports: the CLI's one-line message.",
                                PyExc_RuntimeError, nullptr);
  g_model_error = PyErr_NewExceptionWithDoc(
      "ampx.ModelError", "The model cannot be read or imported (file, op, attribute).", g_error,
      nullptr);
  g_device_error = PyErr_NewExceptionWithDoc(
      "ampx.DeviceError",
      "A device or plugin: unknown or skipped, a failed plugin call, not enough memory.", g_error,
      nullptr);
  nb::object bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_usage_error = PyErr_NewExceptionWithDoc(
      "ampx.UsageError", "A bad argument (also a ValueError): what the CLI exits 2 for.",
      bases.ptr(), nullptr);
  m.attr("Error") = nb::handle(g_error);
  m.attr("ModelError") = nb::handle(g_model_error);
  m.attr("DeviceError") = nb::handle(g_device_error);
  m.attr("UsageError") = nb::handle(g_usage_error);
  nb::register_exception_translator(&translate);
}

}  // namespace ampx::python
