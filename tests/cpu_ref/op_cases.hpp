// The op-case catalogue is the conformance kit's (plugins/check): every backend test and `ampx
// plugin-check` run the same cases.
#pragma once

#include <ampx/plugin_check/op_cases.hpp>

namespace ampx::test {
using namespace ampx::check;
}  // namespace ampx::test
