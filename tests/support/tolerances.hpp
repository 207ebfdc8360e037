// The tolerances per dtype are shipped with the conformance kit (plugins/check).
#pragma once

#include <ampx/plugin_check/tolerances.hpp>

namespace ampx::test {
using namespace ampx::check;
}  // namespace ampx::test
