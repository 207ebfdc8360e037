// Workgroup sum over the 64 invocations of a 64-wide workgroup in shared
// memory, f32, in a fixed tree order (results do not depend on timing).
// Every invocation of the workgroup must call it (it has barriers).
shared float red64[64];
float reduce_sum64(float v) {
  uint t = gl_LocalInvocationID.x;
  red64[t] = v;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red64[t] += red64[t + s];
    barrier();
  }
  float r = red64[0];
  barrier();
  return r;
}
