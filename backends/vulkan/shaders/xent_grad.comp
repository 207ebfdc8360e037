#version 450
// SoftmaxCrossEntropyGrad: dLogits = (exp(log_prob) - onehot(label)) * dLoss / N,
// one invocation per element of [N, C]; a row whose label lies outside
// [0, C) gets NaN. p: 0 N, 1 C. Bindings: 1 dLoss [], 2 log_prob, 3 labels
// (words), 4 dLogits.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer DL { ST dloss[]; };
layout(std430, binding = 2) readonly buffer LP { ST lp[]; };
layout(std430, binding = 3) readonly buffer L { uint lab[]; };
layout(std430, binding = 4) writeonly buffer DX { ST dx[]; };
#define LABEL_BINDING 3
#include "labels.glsl"

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  int N = p[0], C = p[1];
  if (i >= uint(N * C)) return;
  uint row = i / uint(C);
  int j = int(i % uint(C));
  int label = label_at(row, C);
  float k = float(dloss[pc.off[0]]) / float(N);
  float r = (exp(float(lp[pc.off[1] + i])) - (j == label ? 1.0 : 0.0)) * k;
  dx[pc.off[3] + i] = ST(label < 0 ? uintBitsToFloat(0x7fc00000u) : r);
}
