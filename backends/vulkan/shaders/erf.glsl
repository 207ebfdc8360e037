// erf and a tanh that does not overflow, shared by unary.comp (Gelu, Tanh)
// and egrad.comp (their gradients).
// Abramowitz & Stegun 7.1.26 is only 1.5e-7 absolute; this is erf via the
// W. J. Cody style rational approximation of erfc used by Numerical Recipes
// (erfcc, fractional error < 1.2e-7), good to f32 tolerance.
float erf_approx(float v) {
  float z = abs(v);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 +
                    t * (1.00002368 +
                    t * (0.37409196 +
                    t * (0.09678418 +
                    t * (-0.18628806 +
                    t * (0.27886807 +
                    t * (-1.13520398 +
                    t * (1.48851587 +
                    t * (-0.82215223 + t * 0.17087277)))))))));
  return v >= 0.0 ? 1.0 - r : r - 1.0;
}
// tanh, Cephes tanhf: below |v| = 0.625 an odd polynomial (the builtin,
// (e^2v - 1) / (e^2v + 1) on lavapipe, is only accurate to ~1e-7 absolute
// there: Mish(-30) came out 3e5 times too large), above it 1 - 2 / (e^2|v| + 1)
// with |v| clamped to 15 (tanh 15 is 1 in f32; e^2v overflows to inf/inf
// on some drivers). NaN stays NaN.
float safe_tanh(float v) {
  float a = min(abs(v), 15.0);
  if (a < 0.625) {
    float z = v * v;
    return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z +
             1.33314422036e-1) * z - 3.33332819422e-1) * z * v + v;
  }
  if ((floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u) return v;  // NaN (bits: no fast-math fold)
  float r = 1.0 - 2.0 / (exp(a + a) + 1.0);
  return v < 0.0 ? -r : r;
}
