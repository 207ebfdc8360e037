// Attention and RotaryEmbedding (docs/OPS.md) in f32 / f64 (16-bit arrives
// widened: a 16-bit node computes in f32 throughout and rounds Y once).
// Attention follows ONNX's reference row by row: scaled QK, softcap, the
// additive bias (mask, causal and window frontiers, nonpad_kv_seqlen), a
// softmax that maps an all -inf row to zeros, and the fully-masked-row
// guard decided on the bias alone, so a masked row is 0 whatever its logits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

struct AttentionShape {
  int64_t B, Hq, S, E, Hkv, T, Ev;
  // The mask, broadcast into [B, Hq, S, Tm]: element strides (0 where
  // broadcast), Tm <= T (the keys past Tm are masked).
  bool has_mask = false, mask_bool = false;
  int64_t mb = 0, mh = 0, mi = 0, Tm = 0;
  bool has_len = false, len64 = true;
  double scale = 1, softcap = 0;
  bool causal = false;
  int64_t past = 0, left = -1, right = -1, mode = -1;
  bool softmax_f64 = false;
};

template <class T>
class AttentionKernel final : public CpuKernel {
 public:
  explicit AttentionKernel(AttentionShape s) : s_(s) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* q = static_cast<const T*>(in[0]);
    const auto* k = static_cast<const T*>(in[1]);
    const auto* v = static_cast<const T*>(in[2]);
    const void* mask = s_.has_mask ? in[3] : nullptr;
    const void* lens = s_.has_len ? in[4] : nullptr;
    auto* y = static_cast<T*>(out[0]);
    T* qk = s_.mode >= 0 ? static_cast<T*>(out[1]) : nullptr;
    const int64_t rows = s_.B * s_.Hq * s_.S;
    const double work = double(rows) * double(s_.T) * double(s_.E + s_.Ev);
    parallel_for(rows, threads_for(work), [&](int64_t r0, int64_t r1) {
      std::vector<T> sc(static_cast<size_t>(s_.T)), bias(static_cast<size_t>(s_.T)),
          p(static_cast<size_t>(s_.T));
      for (int64_t r = r0; r < r1; ++r)
        row(r, q, k, v, mask, lens, y, qk, sc.data(), bias.data(), p.data());
    });
  }

 private:
  static constexpr T kNegInf = -std::numeric_limits<T>::infinity();

  int64_t kv_len(const void* lens, int64_t b) const {
    return s_.len64 ? static_cast<const int64_t*>(lens)[b] : static_cast<const int32_t*>(lens)[b];
  }

  // p = exp(x - m) / sum, computed in A (T, or double for softmax_f64).
  template <class A>
  void softmax(const T* x, T m, T* p) const {
    A sum = 0;
    for (int64_t j = 0; j < s_.T; ++j) sum += std::exp(A(x[j]) - A(m));
    for (int64_t j = 0; j < s_.T; ++j) p[j] = static_cast<T>(std::exp(A(x[j]) - A(m)) / sum);
  }

  void row(int64_t r, const T* q, const T* k, const T* v, const void* mask, const void* lens, T* y,
           T* qk, T* sc, T* bias, T* p) const {
    const int64_t i = r % s_.S, h = (r / s_.S) % s_.Hq, b = r / (s_.S * s_.Hq);
    const int64_t kh = h / (s_.Hq / s_.Hkv);  // GQA: each KV head serves Hq/Hkv query heads
    const T* qr = q + r * s_.E;
    const T* kb = k + (b * s_.Hkv + kh) * s_.T * s_.E;
    const T* vb = v + (b * s_.Hkv + kh) * s_.T * s_.Ev;
    const int64_t len = s_.has_len ? kv_len(lens, b) : s_.T;
    // Keys before the query block: the cache's length, or per batch the
    // valid keys less the queries (ONNX's bottom-right alignment).
    const int64_t offset = s_.has_len ? len - s_.S : s_.past;
    const T scale = static_cast<T>(s_.scale), cap = static_cast<T>(s_.softcap);
    T bias_max = kNegInf;
    for (int64_t j = 0; j < s_.T; ++j) {
      T dot = 0;
      const T* kr = kb + j * s_.E;
      for (int64_t e = 0; e < s_.E; ++e) dot += qr[e] * kr[e];
      T x = dot * scale;
      if (cap > 0) x = cap * std::tanh(x / cap);
      sc[j] = x;
      T add = 0;
      if (s_.has_mask) {
        const int64_t at = b * s_.mb + h * s_.mh + i * s_.mi + j;
        if (j >= s_.Tm)
          add = kNegInf;  // ONNX pads a short mask with -inf / false
        else if (s_.mask_bool)
          add = static_cast<const uint8_t*>(mask)[at] ? T(0) : kNegInf;
        else
          add = static_cast<const T*>(mask)[at];
      }
      const int64_t diff = i + offset - j;  // > 0: key j precedes the query
      if (s_.causal && diff < 0) add = kNegInf;
      if (s_.left >= 0 && diff > s_.left) add = kNegInf;
      if (s_.right >= 0 && -diff > s_.right) add = kNegInf;
      if (j >= len) add = kNegInf;
      bias[j] = add;
      bias_max = std::max(bias_max, add);
    }
    T* qk_row = qk ? qk + r * s_.T : nullptr;
    if (qk_row && s_.mode <= 1) std::copy(sc, sc + s_.T, qk_row);
    // The logits with their bias, then the softmax: a row whose maximum is
    // -inf is all zeros; a NaN logit makes the row NaN, as ONNX's.
    T m = kNegInf;
    bool nan = false;
    for (int64_t j = 0; j < s_.T; ++j) {
      sc[j] += bias[j];
      nan = nan || std::isnan(sc[j]);
      m = std::max(m, sc[j]);
    }
    if (qk_row && s_.mode == 2) std::copy(sc, sc + s_.T, qk_row);
    if (bias_max == kNegInf || (m == kNegInf && !nan)) {
      std::fill(p, p + s_.T, T(0));  // fully masked: no attendable key
    } else if (nan) {
      std::fill(p, p + s_.T, std::numeric_limits<T>::quiet_NaN());
    } else if (s_.softmax_f64) {
      softmax<double>(sc, m, p);
    } else {
      softmax<T>(sc, m, p);
    }
    if (qk_row && s_.mode == 3) std::copy(p, p + s_.T, qk_row);
    T* yr = y + r * s_.Ev;
    std::fill(yr, yr + s_.Ev, T(0));
    for (int64_t j = 0; j < s_.T; ++j) {
      const T pj = p[j];
      const T* vr = vb + j * s_.Ev;
      for (int64_t e = 0; e < s_.Ev; ++e) yr[e] += pj * vr[e];
    }
  }

  AttentionShape s_;
};

struct RotaryShape {
  int64_t B, S, H, D, R;
  bool rank4, interleaved, has_pos, pos64 = true;
  int64_t positions = 0;  // rows of the caches with position_ids
  std::string where;
};

template <class T>
class RotaryKernel final : public CpuKernel {
 public:
  explicit RotaryKernel(RotaryShape s) : s_(std::move(s)) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const auto* x = static_cast<const T*>(in[0]);
    const auto* cs = static_cast<const T*>(in[1]);
    const auto* sn = static_cast<const T*>(in[2]);
    auto* y = static_cast<T*>(out[0]);
    const int64_t half = s_.R / 2;
    // Every position is checked before anything is written.
    std::vector<int64_t> row(static_cast<size_t>(s_.B * s_.S));
    for (int64_t t = 0; t < s_.B * s_.S; ++t)
      row[static_cast<size_t>(t)] =
          s_.has_pos ? checked_index(s_.where + ": position_ids", in[3], s_.pos64, t, s_.positions)
                     : t;
    for (int64_t b = 0; b < s_.B; ++b)
      for (int64_t h = 0; h < s_.H; ++h)
        for (int64_t t = 0; t < s_.S; ++t) {
          // The head vector: [b, h, t, :] in 4-D, [b, t, h·D + :] in 3-D.
          const int64_t at =
              s_.rank4 ? ((b * s_.H + h) * s_.S + t) * s_.D : ((b * s_.S + t) * s_.H + h) * s_.D;
          const T* xi = x + at;
          T* yo = y + at;
          const int64_t cache = row[static_cast<size_t>(b * s_.S + t)] * half;
          for (int64_t f = 0; f < half; ++f) {
            const T c = cs[cache + f], s = sn[cache + f];
            const int64_t i1 = s_.interleaved ? 2 * f : f;
            const int64_t i2 = s_.interleaved ? 2 * f + 1 : f + half;
            const T x1 = xi[i1], x2 = xi[i2];
            yo[i1] = c * x1 - s * x2;
            yo[i2] = s * x1 + c * x2;
          }
          std::copy(xi + s_.R, xi + s_.D, yo + s_.R);
        }
  }

 private:
  RotaryShape s_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_attention(Ctx& c) {
  // Shapes and attributes were checked by the op set (infer_attention.cpp).
  const auto &q = c.in[0].dims, &k = c.in[1].dims, &v = c.in[2].dims;
  AttentionShape s{q[0], q[1], q[2], q[3], k[1], k[2], v[3]};
  if (c.in.size() > 3) {
    const TensorInfo& m = c.in[3];
    s.has_mask = true;
    s.mask_bool = m.dtype == AMPX_DTYPE_BOOL;
    std::vector<int64_t> d(4 - m.dims.size(), 1);
    d.insert(d.end(), m.dims.begin(), m.dims.end());
    s.Tm = d[3];
    s.mi = d[2] == 1 ? 0 : d[3];
    s.mh = d[1] == 1 ? 0 : d[2] * d[3];
    s.mb = d[0] == 1 ? 0 : d[1] * d[2] * d[3];
  }
  if (c.in.size() > 4) {
    s.has_len = true;
    s.len64 = c.in[4].dtype == AMPX_DTYPE_I64;
  }
  s.scale = c.v.get_float("scale", 1.0 / std::sqrt(double(s.E)));
  s.softcap = c.v.get_float("softcap", 0.0);
  s.causal = c.v.get_int("is_causal", 0) != 0;
  s.past = c.v.get_int("past_length", 0);
  s.left = c.v.get_int("left_window", -1);
  s.right = c.v.get_int("right_window", -1);
  s.mode = c.v.get_int("qk_output", -1);
  s.softmax_f64 = c.v.get_int("softmax_f64", 0) != 0;
  return typed<AttentionKernel>(c, s);
}

std::unique_ptr<CpuKernel> make_rotary_embedding(Ctx& c) {
  const auto& x = c.in[0].dims;
  RotaryShape s{};
  s.rank4 = x.size() == 4;
  s.B = x[0];
  if (s.rank4) {
    s.H = x[1], s.S = x[2], s.D = x[3];
  } else {
    s.H = c.v.get_int("num_heads", 1), s.S = x[1], s.D = x[2] / s.H;
  }
  const int64_t r = c.v.get_int("rotary_embedding_dim", 0);
  s.R = r == 0 ? s.D : r;
  s.interleaved = c.v.get_int("interleaved", 0) != 0;
  s.has_pos = c.in.size() > 3;
  if (s.has_pos) {
    s.pos64 = c.in[3].dtype == AMPX_DTYPE_I64;
    s.positions = c.in[1].dims[0];
  }
  s.where = c.v.where();
  return typed<RotaryKernel>(c, std::move(s));
}

}  // namespace ampx::reference::detail
