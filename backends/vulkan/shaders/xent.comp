#version 450
// SoftmaxCrossEntropy over logits [N, C] with i64 labels [N] (docs/OPS.md).
// MODE 0, a workgroup per row: log_prob = x - (max + log(sum exp(x - max))),
// the same expression as cpu_ref (max subtracted, NaN propagates).
// MODE 1, one workgroup: loss = -(1/N) sum_n log_softmax(x)[n, label_n],
// each row's log-sum-exp recomputed in f32 from the logits (not from a
// 16-bit log_prob), summed in a fixed order. A label outside [0, C) makes the
// loss NaN. p: 0 N, 1 C. Bindings: 1 logits, 2 labels (words), 3 loss,
// 4 log_prob.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, binding = 1) readonly buffer X { ST x[]; };
layout(std430, binding = 2) readonly buffer L { uint lab[]; };
layout(std430, binding = 3) writeonly buffer Loss { ST loss[]; };
layout(std430, binding = 4) writeonly buffer LP { ST lp[]; };
#define LABEL_BINDING 2
#include "labels.glsl"
#include "reduce64.glsl"

shared float mx[64];
float reduce_max64(float v) {
  uint t = gl_LocalInvocationID.x;
  mx[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) {
      float o = mx[t + s];
      if (isnan(o) || o > mx[t]) mx[t] = o;
    }
    barrier();
  }
  float r = mx[0];
  barrier();
  return r;
}

float max_nan(float m, float v) { return isnan(v) || v > m ? v : m; }

void main() {
  int N = p[0], C = p[1];
  uint t = gl_LocalInvocationID.x;
  if (MODE == 0) {
    uint row = linear_group();
    if (row >= uint(N)) return;  // uniform per workgroup: barriers stay legal
    uint base = pc.off[0] + row * uint(C);
    float m = uintBitsToFloat(0xff800000u);
    for (uint j = t; j < uint(C); j += 64u) m = max_nan(m, float(x[base + j]));
    m = reduce_max64(m);
    float s = 0.0;
    for (uint j = t; j < uint(C); j += 64u) s += exp(float(x[base + j]) - m);
    float lse = m + log(reduce_sum64(s));
    for (uint j = t; j < uint(C); j += 64u)
      lp[pc.off[3] + row * uint(C) + j] = ST(float(x[base + j]) - lse);
    return;
  }
  float acc = 0.0;
  bool bad = false;
  for (uint n = t; n < uint(N); n += 64u) {
    int label = label_at(n, C);
    if (label < 0) {
      bad = true;
      continue;
    }
    uint base = pc.off[0] + n * uint(C);
    float m = uintBitsToFloat(0xff800000u);
    for (uint j = 0u; j < uint(C); ++j) m = max_nan(m, float(x[base + j]));
    float s = 0.0;
    for (uint j = 0u; j < uint(C); ++j) s += exp(float(x[base + j]) - m);
    acc -= float(x[base + uint(label)]) - (m + log(s));
  }
  float total = reduce_sum64(bad ? uintBitsToFloat(0x7fc00000u) : acc);
  if (t == 0u) loss[pc.off[2]] = ST(total / float(N));
}
