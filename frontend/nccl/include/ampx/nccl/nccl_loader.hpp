// Finding and loading libampx_nccl.so (nccl_module.hpp) at run time, so
// that ampx runs where neither it nor libnccl.so.2 is installed.
#pragma once

#include <ampx/nccl/nccl_module.hpp>

#include <string>

namespace ampx::nccl {

// The process's module, loaded on the first call (and kept: NCCL is never
// unloaded), or nullptr with `why` set: AMPX_NCCL=off, the module or
// libnccl.so.2 not found, a module of another build. Looked for at
// $AMPX_NCCL_MODULE, else next to the plugin directories
// (<plugin dir>/../libampx_nccl.so).
Module* nccl_module(std::string& why);

}  // namespace ampx::nccl
