#version 450
// Attention (docs/OPS.md), a workgroup of 64 per query row (b, h, i), f32
// arithmetic in every variant as cpu_ref's (16-bit widened, each output
// rounded once). Pass 1: each invocation takes keys j ≡ t (mod 64): the
// score s = scale·q·k_j (softcapped), the bias (float mask, or −∞ where the
// bool mask is false, past the mask's last dim, past nonpad_kv_seqlen,
// outside the causal and window frontiers), x = s + bias; the row's max,
// the bias's max and a NaN flag reduced in shared memory. Pass 2: the
// exp-sum. Pass 3, CHUNK keys at a time: p_j = exp(x_j − m)/sum into shared
// memory, then each invocation adds p·V into its own output columns in key
// order. A row whose bias is −∞ everywhere (or whose logits all are −∞)
// gives p = 0, a NaN logit p = NaN, as cpu_ref. Rows of at most CHUNK keys
// keep x in shared memory; longer ones recompute it in passes 2 and 3.
// MASK_U8: the mask is bool (bytes; needs 8-bit storage). SOFTMAX_F64
// (softmax_f64; needs shaderFloat64): the exp-sum and the quotients in f64,
// as cpu_ref's softmax<double>.
// p: 0 rows, 1 S, 2 Hq, 3 Hkv, 4 T, 5 E, 6 Ev, 7 scale bits, 8 softcap
//    bits, 9 is_causal, 10 past_length, 11 left_window, 12 right_window,
//    13 qk_output, 14 has mask, 15..17 mask strides (b, h, i; 0 where
//    broadcast), 18 mask's last dim, 19 nonpad_kv_seqlen (0 none, 1 i32,
//    2 i64).
// Bindings: 1 Q, 2 K, 3 V, 4 mask (Q when absent), 5 nonpad_kv_seqlen (Q
// when absent), 6 Y, 7 the qk output (Y when absent).
#ifdef MASK_U8
#extension GL_EXT_shader_8bit_storage : require
#endif
#include "common.glsl"
#include "erf.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 1) readonly buffer Q { ST q[]; };
layout(std430, binding = 2) readonly buffer K { ST k[]; };
layout(std430, binding = 3) readonly buffer V { ST v[]; };
#ifdef MASK_U8
layout(std430, binding = 4) readonly buffer M { uint8_t mk[]; };
#else
layout(std430, binding = 4) readonly buffer M { ST mk[]; };
#endif
layout(std430, binding = 5) readonly buffer L { int lens[]; };
layout(std430, binding = 6) writeonly buffer Y { ST y[]; };
layout(std430, binding = 7) writeonly buffer QK { ST qk[]; };

const uint MAX_E = 512u;  // Q·K and V widths (the host declines wider heads)
const uint CHUNK = 2048u;
shared float qs[MAX_E];
shared float acc[MAX_E];
shared float xs[CHUNK];
shared float red[64];
shared uint redu[64];

#define NEG_INF uintBitsToFloat(0xff800000u)
#define QNAN uintBitsToFloat(0x7fc00000u)

#ifdef SOFTMAX_F64
#define ACC double
shared double redd[64];
// exp(r) in f64 for r <= 0 (GLSL has no f64 exp): r = k·ln2 + f with
// |f| <= ln2/2 (Cody-Waite: k·ln2's high part is exact), e^f by its Taylor
// polynomial of degree 13 (error < 1e-17), then 2^k.
double exp_d(double r) {
  if (r < -746.0LF) return 0.0LF;
  double k = roundEven(r * 1.4426950408889634LF);
  double f = r - k * 6.93147180369123816490e-01LF - k * 1.90821492927058770002e-10LF;
  double e = 1.0LF;
  for (int i = 13; i >= 1; --i) e = 1.0LF + f * e / double(i);
  return ldexp(e, int(k));
}
#define EXP_M(x) exp_d(double(x) - double(m))
#else
#define ACC float
#define EXP_M(x) exp((x) - m)
#endif

uint E, T, kbase, mrow;
int irow, len, offset;
float scale, cap;

// From the exponent bits: drivers may fold isnan() away.
bool is_nan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }

float reduce_max(float x) {
  uint t = gl_LocalInvocationID.x;
  red[t] = x;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] = max(red[t], red[t + s]);
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

float reduce_sum(float x) {
  uint t = gl_LocalInvocationID.x;
  red[t] = x;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    barrier();
  }
  float r = red[0];
  barrier();
  return r;
}

#ifdef SOFTMAX_F64
double reduce_acc(double x) {
  uint t = gl_LocalInvocationID.x;
  redd[t] = x;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) redd[t] += redd[t + s];
    barrier();
  }
  double r = redd[0];
  barrier();
  return r;
}
#else
float reduce_acc(float x) { return reduce_sum(x); }
#endif

uint reduce_or(uint x) {
  uint t = gl_LocalInvocationID.x;
  redu[t] = x;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (t < s) redu[t] |= redu[t + s];
    barrier();
  }
  uint r = redu[0];
  barrier();
  return r;
}

// scale·q·k_j in key order, then the softcap c·tanh(s/c).
float score(uint j) {
  float dot = 0.0;
  uint kr = kbase + j * E;
  for (uint e = 0u; e < E; ++e) dot += qs[e] * float(k[kr + e]);
  float x = dot * scale;
  if (cap > 0.0) x = cap * safe_tanh(x / cap);
  return x;
}

float bias(uint j) {
  float add = 0.0;
  if (p[14] != 0) {
    if (j >= uint(p[18])) {
      add = NEG_INF;  // ONNX pads a short mask with −∞ / false
    } else {
      uint at = pc.off[3] + mrow + j;
#ifdef MASK_U8
      add = uint(mk[at]) != 0u ? 0.0 : NEG_INF;
#else
      add = float(mk[at]);
#endif
    }
  }
  int diff = irow + offset - int(j);  // > 0: key j precedes the query
  if (p[9] != 0 && diff < 0) add = NEG_INF;
  if (p[11] >= 0 && diff > p[11]) add = NEG_INF;
  if (p[12] >= 0 && -diff > p[12]) add = NEG_INF;
  if (int(j) >= len) add = NEG_INF;
  return add;
}

// nonpad_kv_seqlen[b], clamped to ±2^30 (an i64 past that changes nothing
// for rows of 32-bit-indexed tensors, and keeps i + offset − j in range).
int kv_len(uint b) {
  if (p[19] == 1) return clamp(lens[pc.off[4] + b], -(1 << 30), 1 << 30);
  int lo = lens[pc.off[4] + 2u * b], hi = lens[pc.off[4] + 2u * b + 1u];
  if (hi != (lo < 0 ? -1 : 0)) return hi < 0 ? -(1 << 30) : (1 << 30);
  return clamp(lo, -(1 << 30), 1 << 30);
}

void main() {
  uint r = linear_group();
  if (r >= uint(p[0])) return;  // the whole workgroup
  uint t = gl_LocalInvocationID.x;
  uint S = uint(p[1]), Hq = uint(p[2]), Hkv = uint(p[3]), Ev = uint(p[6]);
  T = uint(p[4]);
  E = uint(p[5]);
  uint i = r % S, h = (r / S) % Hq, b = r / (S * Hq);
  uint kv = b * Hkv + h / (Hq / Hkv);  // GQA: each KV head serves Hq/Hkv query heads
  kbase = pc.off[1] + kv * T * E;
  uint vbase = pc.off[2] + kv * T * Ev;
  mrow = b * uint(p[15]) + h * uint(p[16]) + i * uint(p[17]);
  len = p[19] == 0 ? int(T) : kv_len(b);
  // Keys before the query block: past_length, or per batch the valid keys
  // less the queries (ONNX's bottom-right alignment).
  offset = p[19] == 0 ? p[10] : len - int(S);
  irow = int(i);
  scale = pf(7);
  cap = pf(8);
  int mode = p[13];
  for (uint e = t; e < E; e += 64u) qs[e] = float(q[pc.off[0] + r * E + e]);
  barrier();

  bool resident = T <= CHUNK;
  uint qko = pc.off[6] + r * T;
  float m = NEG_INF, bmax = NEG_INF;
  uint nan = 0u;
  for (uint j = t; j < T; j += 64u) {
    float s = score(j), a = bias(j);
    if (mode == 0 || mode == 1) qk[qko + j] = ST(s);
    float x = s + a;
    if (mode == 2) qk[qko + j] = ST(x);
    // cpu_ref's std::max keeps its maximum when compared with NaN.
    if (is_nan(x))
      nan = 1u;
    else
      m = max(m, x);
    if (!is_nan(a)) bmax = max(bmax, a);
    if (resident) xs[j] = x;
  }
  m = reduce_max(m);
  bmax = reduce_max(bmax);
  nan = reduce_or(nan);
  // 0: a softmax; 1: no attendable key, p = 0; 2: a NaN logit, p = NaN.
  uint state = bmax == NEG_INF || (m == NEG_INF && nan == 0u) ? 1u : nan != 0u ? 2u : 0u;
  ACC sum = ACC(1);
  if (state == 0u) {
    ACC s = ACC(0);
    for (uint j = t; j < T; j += 64u) s += EXP_M(resident ? xs[j] : score(j) + bias(j));
    sum = reduce_acc(s);
  }

  for (uint e = t; e < Ev; e += 64u) acc[e] = 0.0;
  for (uint c0 = 0u; c0 < T; c0 += CHUNK) {
    uint n = min(CHUNK, T - c0);
    barrier();  // the previous chunk's probabilities are read
    for (uint jj = t; jj < n; jj += 64u) {
      uint j = c0 + jj;
      float pj = state == 1u ? 0.0 : QNAN;
      if (state == 0u) pj = float(EXP_M(resident ? xs[j] : score(j) + bias(j)) / sum);
      if (mode == 3) qk[qko + j] = ST(pj);
      xs[jj] = pj;
    }
    barrier();
    for (uint e = t; e < Ev; e += 64u) {
      float a = acc[e];
      for (uint jj = 0u; jj < n; ++jj) a += xs[jj] * float(v[vbase + (c0 + jj) * Ev + e]);
      acc[e] = a;
    }
  }
  for (uint e = t; e < Ev; e += 64u) y[pc.off[5] + r * Ev + e] = ST(acc[e]);
}
