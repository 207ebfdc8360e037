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
uvec2 neg64(uvec2 x) { return sub64(uvec2(0u), x); }
bool uless64(uvec2 x, uvec2 z) { return x.y < z.y || (x.y == z.y && x.x < z.x); }
// Unsigned 64-bit n / d and n % d (d != 0) by shift and subtract.
void udivmod64(uvec2 n, uvec2 d, out uvec2 q, out uvec2 r) {
  q = uvec2(0u);
  r = uvec2(0u);
  for (int i = 63; i >= 0; --i) {
    r = uvec2(r.x << 1, (r.y << 1) | (r.x >> 31));
    r.x |= i >= 32 ? (n.y >> uint(i - 32)) & 1u : (n.x >> uint(i)) & 1u;
    if (!uless64(r, d)) {
      r = sub64(r, d);
      if (i >= 32)
        q.y |= 1u << uint(i - 32);
      else
        q.x |= 1u << uint(i);
    }
  }
}
