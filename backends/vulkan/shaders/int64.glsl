// i64 arithmetic on (low, high) uint word pairs without shaderInt64,
// two's complement and wrapping as cpu_ref: carries by uaddCarry and
// usubBorrow, products by umulExtended. Shared by iarith.comp and
// scatter_nd.comp.
uvec2 add64(uvec2 x, uvec2 z) {
  uint c;
  uint lo = uaddCarry(x.x, z.x, c);
  return uvec2(lo, x.y + z.y + c);
}
uvec2 sub64(uvec2 x, uvec2 z) {
  uint br;
  uint lo = usubBorrow(x.x, z.x, br);
  return uvec2(lo, x.y - z.y - br);
}
uvec2 mul64(uvec2 x, uvec2 z) {
  uint hi, lo;
  umulExtended(x.x, z.x, hi, lo);
  return uvec2(lo, hi + x.x * z.y + x.y * z.x);
}
bool less64(uvec2 x, uvec2 z) {
  int hx = int(x.y), hz = int(z.y);
  return hx < hz || (hx == hz && x.x < z.x);
}
