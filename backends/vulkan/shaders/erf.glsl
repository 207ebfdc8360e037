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
// tanh through exp overflows to inf/inf for large |v| on some drivers.
float safe_tanh(float v) { return tanh(clamp(v, -15.0, 15.0)); }
