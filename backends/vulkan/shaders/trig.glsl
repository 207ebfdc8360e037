// Sin ... Atanh for unary.comp, in f32 (every variant: f16 inputs widened),
// within a few f32 ulps of the C library's results that cpu_ref computes.
// The GLSL builtins are not used: Vulkan only asks sin/cos for an absolute
// error of 2^-11 on [-pi, pi] (and nothing outside it), exp 3 + 2|x| ulps,
// and asin/acos/atan/sinh/asinh... inherit those or a textbook formula that
// cancels (asinh of a negative x, sinh near 0). Instead:
//  - sin/cos/tan: an exact argument reduction by pi/2 in integer arithmetic
//    (Payne-Hanek: the float's 24-bit significand times a 96-bit window of
//    2/pi's bits), so 1e6 or 3e38 reduce as exactly as 1.0, then Cephes'
//    single-precision polynomials on [-pi/4, pi/4];
//  - asin/acos/atan: Cephes' asinf/acosf/atanf (range reduction, minimax);
//  - exp: Cody-Waite reduction by ln 2 and Cephes' expf polynomial; sinh and
//    cosh from it, sinh by a polynomial for |x| < 1 (no cancellation), and
//    e^(|x|/2) squared past 88 so sinh(89) does not overflow early;
//  - asinh/acosh/atanh via log1p forms that do not cancel, the sign applied
//    to |x|'s result; ln|x| + ln 2 where x^2 would overflow; an own log
//    (Cephes logf: the builtin's 2^-21 absolute error near 1 is too coarse
//    for a log1p).
// The steps whose rounding is the point (the two-part reductions, 1 - a,
// t = x - 1) are `precise`, so no driver refolds them algebraically.

float nan_() { return uintBitsToFloat(0x7fc00000u); }
bool not_finite(float v) { return (floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u; }

const float kPiOver2 = 1.57079632679489661923;
const float kPiOver4 = 0.785398163397448309616;
const float kLn2 = 0.693147180559945309417;

// 2/pi's bits after the binary point, 32 a word, after one word of zeros
// (a window may start before the point for |x| just above pi/4).
const uint kTwoOverPi[9] = uint[9](0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                   0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);

// |x| = q * pi/2 + r, |r| <= pi/4, for finite |x| >= pi/4: x = m * 2^e
// (m the 24-bit significand), and x * 2/pi mod 4 is m times the 96 bits of
// 2/pi from position e - 1 on (earlier bits only add multiples of 4, later
// ones less than 2^-70): a 2.94 fixed-point number whose top 2 bits are the
// quadrant. Its fraction, read as a signed number, rounds q to nearest.
float reduce_pio2(float ax, out uint q) {
  uint bits = floatBitsToUint(ax);
  uint m = (bits & 0x7fffffu) | 0x800000u;
  int e = int(bits >> 23) - 150;
  uint g = uint(e - 1 + 31);  // bit index of the window in kTwoOverPi
  uint wi = g >> 5, sh = g & 31u;
  uint w[3];
  for (uint k = 0u; k < 3u; ++k)
    w[k] = sh == 0u ? kTwoOverPi[wi + k]
                    : (kTwoOverPi[wi + k] << sh) | (kTwoOverPi[wi + k + 1u] >> (32u - sh));
  // m * (w0, w1, w2) mod 2^96 as words (r0, r1, r2), most significant first.
  uint h2, r2, h1, l1, c;
  umulExtended(m, w[2], h2, r2);
  umulExtended(m, w[1], h1, l1);
  uint r1 = uaddCarry(h2, l1, c);
  uint r0 = h1 + m * w[0] + c;
  // The fraction's top 64 bits, signed: negative means q rounds up.
  uint fa = (r0 << 2) | (r1 >> 30), fb = (r1 << 2) | (r2 >> 30);
  q = (r0 >> 30) + (fa >> 31);
  bool neg = int(fa) < 0;
  if (neg) {  // two's complement negation of (fa, fb)
    uint carry;
    fb = uaddCarry(~fb, 1u, carry);
    fa = ~fa + carry;
  }
  float f = float(fa) * 2.3283064365386963e-10 + float(fb) * 5.4210108624275222e-20;  // 2^-32, 2^-64
  return (neg ? -f : f) * kPiOver2;
}

// Cephes sinf/cosf polynomials on [-pi/4, pi/4].
float sin_poly(float r) {
  float z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}
float cos_poly(float r) {
  float z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z -
         0.5 * z + 1.0;
}

// which: 0 sin, 1 cos, 2 tan.
float trig(float x, int which) {
  if (not_finite(x)) return nan_();
  float ax = abs(x);
  uint q = 0u;
  float r = ax;
  if (ax > kPiOver4) r = reduce_pio2(ax, q);
  float s = sin_poly(r), c = cos_poly(r);
  float v;
  if (which == 2) {
    v = (q & 1u) == 0u ? s / c : -c / s;
    return x < 0.0 ? -v : v;
  }
  if (which == 1) q += 1u;  // cos x = sin(x + pi/2), for |x|
  v = (q & 1u) == 0u ? s : c;
  if ((q & 2u) != 0u) v = -v;
  return which == 0 && x < 0.0 ? -v : v;
}

// Cephes asinf's polynomial, |v| <= 0.5: asin(v).
float asin_poly(float v) {
  float z = v * v;
  return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z +
           7.4953002686e-2) * z + 1.6666752422e-1) * z * v + v;
}
float asin_(float x) {
  float a = abs(x);
  if (a > 1.0) return nan_();
  // asin a = pi/2 - 2 asin(sqrt((1 - a) / 2)) for a > 1/2 (1 - a is exact).
  float r = a > 0.5 ? kPiOver2 - 2.0 * asin_poly(sqrt(0.5 * (1.0 - a))) : asin_poly(a);
  return x < 0.0 ? -r : r;  // NaN passes through asin_poly
}
float acos_(float x) {
  if (abs(x) > 1.0) return nan_();
  if (x < -0.5) return 3.14159265358979323846 - 2.0 * asin_poly(sqrt(0.5 * (1.0 + x)));
  if (x > 0.5) return 2.0 * asin_poly(sqrt(0.5 * (1.0 - x)));
  return kPiOver2 - asin_poly(x);
}
float atan_(float x) {
  float a = abs(x), y0 = 0.0;
  if (a > 2.414213562373095) {  // tan 3pi/8: atan a = pi/2 + atan(-1/a)
    y0 = kPiOver2;
    a = -1.0 / a;
  } else if (a > 0.4142135623730950) {  // tan pi/8: pi/4 + atan((a-1)/(a+1))
    y0 = kPiOver4;
    a = (a - 1.0) / (a + 1.0);
  }
  float z = a * a;
  float r = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
             3.33329491539e-1) * z * a + a + y0;
  return x < 0.0 ? -r : r;
}

// e^v for |v| <= 88.7 (k <= 127 keeps ldexp's scale finite): v = k ln2 + r
// with ln 2 in two parts (k * 0.693359375 is exact), Cephes' expf on r.
float exp_(float v) {
  float k = floor(v * 1.44269504088896341 + 0.5);
  // `precise`: the two-part subtraction must not be refolded into one.
  precise float r = (v - k * 0.693359375) - k * -2.12194440e-4;
  float p = (((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r +
               4.1665795894e-2) * r + 1.6666665459e-1) * r + 5.0000001201e-1) * r * r + r + 1.0;
  return ldexp(p, int(k));
}
// sinh (odd 1) or cosh (0) of |x| = a.
float sinh_cosh(float a, bool odd) {
  if (a > 88.0) {  // e^a / 2 = (e^(a/2) / 2) e^(a/2), overflowing only past FLT_MAX
    if (a > 90.0) return uintBitsToFloat(0x7f800000u);
    float h = exp_(0.5 * a);
    return (0.5 * h) * h;
  }
  if (odd && a < 1.0) {  // Cephes sinhf: no cancellation near 0
    float z = a * a;
    return ((2.03721912945e-4 * z + 8.33028376239e-3) * z + 1.66667160211e-1) * z * a + a;
  }
  float e = exp_(a);
  return odd ? 0.5 * (e - 1.0 / e) : 0.5 * (e + 1.0 / e);
}
bool is_nan_(float v) { return (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u; }
float sinh_(float x) {
  if (is_nan_(x)) return x;  // exp_ would scale by int(NaN)
  float r = sinh_cosh(abs(x), true);
  return x < 0.0 ? -r : r;
}
float cosh_(float x) { return is_nan_(x) ? x : sinh_cosh(abs(x), false); }

// ln v for finite v >= 1 or +inf, Cephes logf: v = f 2^e with f in
// [sqrt(1/2), sqrt(2)), ln 2 in two parts. Not the builtin: Vulkan only
// asks log for 2^-21 absolute error on [0.5, 2], too coarse for the
// log1p below (asinh of 1e-6 would be 5% off).
float log_(float v) {
  if (v > 3.4028234e38) return v;
  int e;
  float f = frexp(v, e);  // [0.5, 1)
  if (f < 0.70710678118654752) {
    e -= 1;
    f = f + f - 1.0;
  } else {
    f = f - 1.0;
  }
  float z = f * f;
  float y = ((((((((7.0376836292e-2 * f - 1.1514610310e-1) * f + 1.1676998740e-1) * f -
                  1.2420140846e-1) * f + 1.4249322787e-1) * f - 1.6668057665e-1) * f +
               2.0000714765e-1) * f - 2.4999993993e-1) * f + 3.3333331174e-1) * f * z;
  float fe = float(e);
  y += -2.12194440e-4 * fe;
  y += -0.5 * z;
  return (f + y) + 0.693359375 * fe;
}
// log(1 + v) for v >= 0, +inf or NaN (returned as they are: frexp leaves
// them undefined), on log_: the rounding of 1 + v divided out.
float log1p_acc(float v) {
  precise float u = 1.0 + v;
  precise float d = u - 1.0;
  if (!(u < 3.4028234e38)) return u;
  return u == 1.0 ? v : log_(u) * (v / d);
}

float asinh_(float x) {
  float a = abs(x), r;
  if (a > 1e18)  // a^2 would overflow: asinh a = ln 2a
    r = log_(a) + kLn2;
  else  // ln(a + sqrt(a^2 + 1)) = log1p(a + a^2 / (1 + sqrt(a^2 + 1)))
    r = log1p_acc(a + a * a / (1.0 + sqrt(a * a + 1.0)));
  return x < 0.0 ? -r : r;
}
float acosh_(float x) {
  if (!(x >= 1.0)) return nan_();  // NaN too
  if (x > 1e18) return log_(x) + kLn2;
  precise float t = x - 1.0;  // exact near 1
  return log1p_acc(t + sqrt(t * (t + 2.0)));
}
float atanh_(float x) {
  float a = abs(x);
  if (a > 1.0) return nan_();
  // atanh a = log1p(2a / (1 - a)) / 2; 1 - a is exact near 1.
  float r = a == 1.0 ? uintBitsToFloat(0x7f800000u) : 0.5 * log1p_acc(2.0 * a / (1.0 - a));
  return x < 0.0 ? -r : r;
}
