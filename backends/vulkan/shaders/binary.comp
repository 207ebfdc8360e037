#version 450
// Add, Sub, Mul, Div with NumPy broadcasting. OP: 0 add, 1 sub, 2 mul, 3 div.
// p: broadcast.glsl's, two inputs.
#include "common.glsl"
#include "broadcast.glsl"
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer Y { ST y[]; };

void main() {
  uint i = linear_group() * 256u + gl_LocalInvocationID.x;
  if (i >= uint(p[0])) return;
  uint o[3] = broadcast_offsets(i, 2);
  CT va = CT(a[pc.off[0] + o[0]]), vb = CT(b[pc.off[1] + o[1]]), r;
  if (OP == 0) r = va + vb;
  else if (OP == 1) r = va - vb;
  else if (OP == 2) r = va * vb;
  else r = CT(float(va) / float(vb));  // division correctly rounded in f32
  y[pc.off[2] + i] = ST(r);
}
