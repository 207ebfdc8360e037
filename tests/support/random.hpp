// The seeded random source lives with the conformance kit (plugins/check).
#pragma once

#include <ampx/plugin_check/random.hpp>

namespace ampx::test {
using namespace ampx::check;
}  // namespace ampx::test
