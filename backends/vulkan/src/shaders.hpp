// The SPIR-V blobs embedded in the plugin (generated embedded_shaders.cpp).
// Names are "<shader>.<variant>", e.g. "gemm.f16", "cast.f32_f16".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ampx::vulkan {

struct EmbeddedShader {
  const char* name;
  const uint32_t* words;
  size_t count;
};

const std::vector<EmbeddedShader>& embedded_shaders();

}  // namespace ampx::vulkan
