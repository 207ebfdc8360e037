// The optimizer updates' per-element arithmetic (docs/OPS.md, SgdUpdate and
// AdamUpdate), one definition for the per-tensor kernels (ops_train.cpp)
// and the fused multi-tensor pass (ops_multi_update.cpp): both compute the
// same f32 operations in the same order, so their bits agree. Each element
// is read before it is written (the outputs may be the inputs' buffers).
#pragma once

#include <cmath>
#include <cstdint>

namespace ampx::reference::detail {

struct SgdParams {
  float momentum = 0;
  bool nesterov = false;
  float weight_decay = 0;
};

// Elements [i0, i1): lr and scale (grad_scale) from hyper. m and m_out are
// null without momentum.
inline void sgd_range(const SgdParams& p, float lr, float scale, const float* w, const float* g,
                      const float* m, float* w_out, float* m_out, int64_t i0, int64_t i1) {
  if (!m) {
    for (int64_t i = i0; i < i1; ++i) {
      const float wi = w[i];
      const float gi = g[i] * scale + p.weight_decay * wi;
      w_out[i] = wi - lr * gi;
    }
    return;
  }
  for (int64_t i = i0; i < i1; ++i) {
    const float wi = w[i];
    const float gi = g[i] * scale + p.weight_decay * wi;
    const float mi = p.momentum * m[i] + gi;
    m_out[i] = mi;
    const float d = p.nesterov ? gi + p.momentum * mi : mi;
    w_out[i] = wi - lr * d;
  }
}

struct AdamParams {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, weight_decay = 0;
  bool decoupled = false;
};

// The step's scalars from hyper: lr, grad_scale, apply, bc1, bc2.
struct AdamStep {
  float scale, step, inv_sqrt_bc2, decay;
  AdamStep(const AdamParams& p, const float* h)
      : scale(h[1]),
        step(h[0] / h[3]),
        inv_sqrt_bc2(1.0f / std::sqrt(h[4])),
        decay(p.decoupled ? 1.0f - h[0] * p.weight_decay : 1.0f) {}
};

// PyTorch's formula: W -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
inline void adam_range(const AdamParams& p, const AdamStep& s, const float* w, const float* g,
                       const float* m, const float* v, float* w_out, float* m_out, float* v_out,
                       int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    const float wi = w[i];
    float gi = g[i] * s.scale;
    if (!p.decoupled) gi += p.weight_decay * wi;
    const float mi = p.beta1 * m[i] + (1.0f - p.beta1) * gi;
    const float vi = p.beta2 * v[i] + (1.0f - p.beta2) * gi * gi;
    m_out[i] = mi;
    v_out[i] = vi;
    w_out[i] = wi * s.decay - s.step * mi / (std::sqrt(vi) * s.inv_sqrt_bc2 + p.epsilon);
  }
}

}  // namespace ampx::reference::detail

namespace ampx::reference::detail {

class Ctx;
// The attributes of an SgdUpdate / AdamUpdate (or their fused forms) node.
SgdParams sgd_params(const Ctx& c);
AdamParams adam_params(const Ctx& c);

}  // namespace ampx::reference::detail
