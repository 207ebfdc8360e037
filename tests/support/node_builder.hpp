// The node builder lives with the conformance kit (plugins/check).
#pragma once

#include <ampx/plugin_check/node_builder.hpp>

namespace ampx::test {
using namespace ampx::check;
}  // namespace ampx::test
