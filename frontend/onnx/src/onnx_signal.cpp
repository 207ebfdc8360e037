// The signal-processing ops (opset 17 on), imported as op-set ops:
//   HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix
//            a constant computed at import, as ONNX's reference computes it
//            (float64, cast to output_datatype), from inputs whose values
//            are known at import (constants, or small graph inputs whose
//            values the InferenceSession binds per run)
//   DFT      a MatMul with a constant DFT matrix over the transform axis:
//            Transpose(axis and the real/imaginary dim last) · Reshape to
//            [rows, c·L] · MatMul [c·L, 2·K] (cos/sin entries from float64,
//            exact angles by reducing k·t mod n in integers) · Reshape ·
//            Transpose back. This is the plain O(n²) DFT, accumulated as a
//            GEMM (f32 accumulation on every backend; 16-bit inputs are cast
//            to f32 around it); truncation and zero padding to dft_length,
//            onesided and the inverse (complex, or real for inverse +
//            onesided, numpy's irfft) are all in the matrix.
//   STFT     Gather of the frames (constant indices), times the window,
//            then the DFT above along the frame axis
// The matrix holds c·L × 2·K values: the importer's tensor bound refuses a
// transform too long for it, naming it.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <utility>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

// A constant of `shape` in dtype `dt` from float64 values: f32/f64 stored
// directly, every other dtype through the reference Cast (folded).
ValueId float_constant(Importer& im, DType dt, const std::vector<double>& v, const Shape& shape) {
  if (dt == DType::kF32) {
    std::vector<std::byte> bytes(v.size() * 4);
    for (size_t i = 0; i < v.size(); ++i) {
      const auto f = static_cast<float>(v[i]);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    }
    return im.constant({DType::kF32, shape}, std::move(bytes));
  }
  std::vector<std::byte> bytes(v.size() * 8);
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  const ValueId c = im.constant({DType::kF64, shape}, std::move(bytes));
  if (dt == DType::kF64) return c;
  return im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

// The attribute output_datatype (default float) as an ampx dtype.
DType output_datatype(Importer& im, const N& n) {
  const auto t = static_cast<int32_t>(im.attr_int_or(n, "output_datatype", 1));
  const auto d = dtype_from_onnx(t);
  if (!d) im.fail("output_datatype " + onnx_elem_type_name(t) + " is not supported");
  return *d;
}

// A known scalar integer input (a size, a length).
int64_t known_int(Importer& im, const N& n, int i, const char* what) {
  const auto v = im.const_ints(n, i, what);
  if (v.size() != 1) im.fail(fmt::format("{} must hold one value, it has {}", what, v.size()));
  return v[0];
}

// --- windows ---------------------------------------------------------------

enum class WindowKind { kHann, kHamming, kBlackman };

void window(Importer& im, const N& n, WindowKind kind) {
  const int64_t size = known_int(im, n, 0, "size");
  if (size < 0) im.fail(fmt::format("size is {}, it must be >= 0", size));
  const DType dt = output_datatype(im, n);
  im.check_size({DType::kF64, Shape{size}}, "the window");
  const int64_t periodic = im.attr_int_or(n, "periodic", 1);
  if (periodic != 0 && periodic != 1) im.fail("attribute 'periodic' must be 0 or 1");
  // N - 1 for a symmetric window: size 1 then divides 0 by 0 (NaN), as
  // ONNX's reference does.
  const auto denom = static_cast<double>(periodic != 0 ? size : size - 1);
  constexpr double pi = std::numbers::pi;
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const auto x = static_cast<double>(i);
    double y = 0;
    switch (kind) {
      case WindowKind::kHann:
        y = std::pow(std::sin(x * pi / denom), 2);
        break;
      case WindowKind::kHamming: {
        constexpr double alpha = 25.0 / 46.0;
        y = alpha - std::cos(x * pi * 2 / denom) * (1 - alpha);
        break;
      }
      case WindowKind::kBlackman:
        y = std::cos(x * (pi * 2) / denom) * -0.5 + std::cos(x * (pi * 4) / denom) * 0.08 + 0.42;
        break;
    }
    w[static_cast<size_t>(i)] = y;
  }
  im.bind(n, 0, float_constant(im, dt, w, Shape{size}));
}

// numpy's float floor division (npy_divmod), which MelWeightMatrix's
// reference uses on float64 bins.
double floor_divide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double q = std::floor(div);
  if (div - q > 0.5) q += 1.0;
  return q;
}

// 2595 · log10(1 + hz / 700) as the reference evaluates it: the first
// steps in the input's precision (numpy keeps a float32 scalar float32),
// the division by ln 10 in float64.
double hertz_to_mel(double hz, DType input) {
  if (input == DType::kF32) {
    const float m = 2595.0F * std::log1p(static_cast<float>(hz) / 700.0F);
    return static_cast<double>(m) / std::log(10.0);
  }
  return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0);
}

}  // namespace

void hann_window(Importer& im, const N& n) {
  window(im, n, WindowKind::kHann);
}
void hamming_window(Importer& im, const N& n) {
  window(im, n, WindowKind::kHamming);
}
void blackman_window(Importer& im, const N& n) {
  window(im, n, WindowKind::kBlackman);
}

// ONNX's reference, step by step: num_mel_bins + 2 band edges spaced evenly
// in mel, converted back to Hz and to spectrogram bins (floor), then
// triangles between neighbouring edges.
void mel_weight_matrix(Importer& im, const N& n) {
  const int64_t mel_bins = known_int(im, n, 0, "num_mel_bins");
  const int64_t dft_length = known_int(im, n, 1, "dft_length");
  const int64_t sample_rate = known_int(im, n, 2, "sample_rate");
  const double lower = im.const_scalar(n, 3, "lower_edge_hertz");
  const double upper = im.const_scalar(n, 4, "upper_edge_hertz");
  if (mel_bins < 1) im.fail(fmt::format("num_mel_bins is {}, it must be >= 1", mel_bins));
  if (dft_length < 1) im.fail(fmt::format("dft_length is {}, it must be >= 1", dft_length));
  if (sample_rate < 1) im.fail(fmt::format("sample_rate is {}, it must be >= 1", sample_rate));
  const DType dt = output_datatype(im, n);
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  const Shape shape{spectrogram_bins, mel_bins};
  im.check_size({DType::kF64, shape}, "the mel weight matrix");

  const double low_mel = hertz_to_mel(lower, im.type(im.input(n, 3)).dtype);
  const double high_mel = hertz_to_mel(upper, im.type(im.input(n, 4)).dtype);
  const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double mel = static_cast<double>(i) * mel_step + low_mel;
    const double hz = 700.0 * std::expm1(mel / 2595.0 * std::log(10.0));
    const double bin =
        floor_divide(static_cast<double>(dft_length + 1) * hz, static_cast<double>(sample_rate));
    // The reference indexes the matrix with these bins: one outside it
    // (an edge past the Nyquist frequency, or NaN) is an error there too.
    if (!(bin >= 0 && bin < static_cast<double>(spectrogram_bins)))
      im.fail(fmt::format(
          "band edge {} falls on spectrogram bin {}, outside [0, {}): check lower_edge_hertz, "
          "upper_edge_hertz and sample_rate",
          i, bin, spectrogram_bins));
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  std::vector<double> out(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    return out[static_cast<size_t>(j * mel_bins + i)];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const auto u = static_cast<size_t>(i);
    const int64_t left = edge[u], center = edge[u + 1], right = edge[u + 2];
    if (center == left) {
      at(center, i) = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  im.bind(n, 0, float_constant(im, dt, out, shape));
}

namespace {

// The DFT of `x` ([..., c] with c 1 (real) or 2 (complex)) along `axis`
// (< rank - 1) with length `length`: see the file's comment.
ValueId dft_along(Importer& im, ValueId x, int64_t axis, int64_t length, bool inverse,
                  bool onesided) {
  const DType dt = im.type(x).dtype;
  const Shape s = im.type(x).shape;
  const auto rank = static_cast<int64_t>(s.size());
  const int64_t c = s.back();
  const int64_t in_len = s[static_cast<size_t>(axis)];
  const bool irfft = inverse && onesided;
  const int64_t out_len = onesided && !inverse ? length / 2 + 1 : length;
  const int64_t out_c = irfft ? 1 : 2;
  const DType mdt = dt == DType::kF64 ? DType::kF64 : DType::kF32;
  const Shape m_shape{im.to_i64(__int128{c} * in_len, "the DFT matrix's rows"),
                      im.to_i64(__int128{out_c} * out_len, "the DFT matrix's columns")};
  im.check_size({mdt, m_shape}, "the DFT matrix");
  im.check_size({DType::kF64, m_shape}, "the DFT matrix (computed in float64)");

  // M[comp · L + t][oc · K + k]: input component comp (0 real, 1 imaginary)
  // at index t, into output component oc at index k.
  const auto cols = static_cast<size_t>(m_shape[1]);
  std::vector<double> m(static_cast<size_t>(m_shape[0]) * cols, 0.0);
  auto put = [&](int64_t comp, int64_t t, int64_t oc, int64_t k, double v) {
    m[static_cast<size_t>(comp * in_len + t) * cols + static_cast<size_t>(oc * out_len + k)] = v;
  };
  // cos and sin of 2π·(a·b mod n)/n, the product reduced exactly; the
  // quarter turns exact (a real input's Nyquist bin has sin(π) = 0, not
  // 1.2e-16).
  const double two_pi_over_n = 2 * std::numbers::pi / static_cast<double>(length);
  const auto cos_sin = [&](int64_t a, int64_t b) -> std::pair<double, double> {
    const auto r = static_cast<int64_t>(__int128{a} * b % length);
    if (__int128{r} * 4 % length == 0) {
      switch (static_cast<int>(__int128{r} * 4 / length)) {
        case 0:
          return {1.0, 0.0};
        case 1:
          return {0.0, 1.0};
        case 2:
          return {-1.0, 0.0};
        default:
          return {0.0, -1.0};
      }
    }
    const double th = two_pi_over_n * static_cast<double>(r);
    return {std::cos(th), std::sin(th)};
  };
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  if (irfft) {
    // numpy's irfft: the first length/2 + 1 bins, Hermitian; the imaginary
    // parts of bin 0 and (even length) the Nyquist bin ignored.
    const int64_t used = std::min(in_len, length / 2 + 1);
    for (int64_t t = 0; t < used; ++t) {
      const bool edge = t == 0 || (length % 2 == 0 && t == length / 2);
      const double w = (edge ? 1.0 : 2.0) * scale;
      for (int64_t k = 0; k < length; ++k) {
        const auto [co, si] = cos_sin(t, k);
        put(0, t, 0, k, w * co);
        if (c == 2 && !edge) put(1, t, 0, k, -w * si);
      }
    }
  } else {
    // Forward e^{-iθ}, inverse e^{+iθ} / n; input past `length` truncated.
    const double sgn = inverse ? 1.0 : -1.0;
    for (int64_t t = 0; t < std::min(in_len, length); ++t)
      for (int64_t k = 0; k < out_len; ++k) {
        const auto [cos_t, sin_t] = cos_sin(t, k);
        const double co = cos_t * scale, si = sgn * sin_t * scale;
        put(0, t, 0, k, co);
        put(0, t, 1, k, si);
        if (c == 2) {
          put(1, t, 0, k, -si);
          put(1, t, 1, k, co);
        }
      }
  }

  // [batch dims..., c, L] rows of c·L values.
  std::vector<int64_t> perm;
  Shape batch;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis) {
      perm.push_back(i);
      batch.push_back(s[static_cast<size_t>(i)]);
    }
  perm.push_back(rank - 1);
  perm.push_back(axis);
  int64_t rows = 1;
  for (int64_t d : batch) rows = im.to_i64(__int128{rows} * d, "the DFT's rows");
  ValueId v = x;
  if (dt != mdt) v = im.emit1("Cast", {v}, {{"to", int64_t(to_c(mdt))}});
  v = im.emit1("Transpose", {v}, {{"perm", perm}});
  v = im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>{rows, m_shape[0]}}});
  v = im.emit1("MatMul", {v, float_constant(im, mdt, m, m_shape)});
  std::vector<int64_t> split(batch.begin(), batch.end());
  split.push_back(out_c);
  split.push_back(out_len);
  v = im.emit1("Reshape", {v}, {{"shape", split}});
  // Back to the input's order, the transform axis in place, the component last.
  const auto nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> back;
  for (int64_t i = 0, b = 0; i < rank - 1; ++i) back.push_back(i == axis ? nb + 1 : b++);
  back.push_back(nb);
  v = im.emit1("Transpose", {v}, {{"perm", back}});
  if (dt != mdt) v = im.emit1("Cast", {v}, {{"to", int64_t(to_c(dt))}});
  return v;
}

// Input 0 of DFT or STFT: a float tensor [..., 1 or 2] of rank >= min_rank.
ValueId signal_input(Importer& im, const N& n, int64_t min_rank, const char* what) {
  const ValueId x = im.input(n, 0);
  const TensorType& t = im.type(x);
  if (!is_float(t.dtype))
    im.fail(fmt::format("{} is {}, expected a float tensor", what, dtype_name(t.dtype)));
  if (static_cast<int64_t>(t.shape.size()) < min_rank)
    im.fail(fmt::format("{} must have rank >= {}, got {}", what, min_rank, t.shape.size()));
  const int64_t c = t.shape.back();
  if (c != 1 && c != 2)
    im.fail(fmt::format("{}'s last dimension is {}: it must be 1 (real) or 2 (complex)", what, c));
  return x;
}

bool flag(Importer& im, const N& n, const char* name, int64_t def) {
  const int64_t v = im.attr_int_or(n, name, def);
  if (v != 0 && v != 1) im.fail(fmt::format("attribute '{}' must be 0 or 1, got {}", name, v));
  return v != 0;
}

}  // namespace

// DFT-17 (axis an attribute, default 1) and DFT-20 (axis input 2, default
// -2); dft_length input 1 in both.
void dft(Importer& im, const N& n) {
  im.set_origin("DFT");  // the default black list keeps it f32 (amp/policy.hpp)
  const ValueId x = signal_input(im, n, 2, "input");
  const auto rank = static_cast<int64_t>(im.type(x).shape.size());
  int64_t axis = 0;
  if (im.opset() >= 20) {
    if (im.attr_int(n, "axis"))
      im.fail("attribute 'axis' is opset 17-19's; opset 20 takes input 2");
    axis = im.has_input(n, 2) ? known_int(im, n, 2, "axis") : -2;
  } else {
    axis = im.attr_int_or(n, "axis", 1);
  }
  axis = norm_axis(im, axis, rank);
  if (axis == rank - 1)
    im.fail("axis is the last dimension, which holds the real and imaginary parts");
  const bool inverse = flag(im, n, "inverse", 0);
  const bool onesided = flag(im, n, "onesided", 0);
  const int64_t in_len = im.type(x).shape[static_cast<size_t>(axis)];
  int64_t length = inverse && onesided ? 2 * (in_len - 1) : in_len;
  if (im.has_input(n, 1)) length = known_int(im, n, 1, "dft_length");
  if (length < 1) im.fail(fmt::format("dft_length is {}, it must be >= 1", length));
  im.bind(n, 0, dft_along(im, x, axis, length, inverse, onesided));
}

// STFT-17: signal [batch, length, 1 or 2], frame_step, window [frame_length]
// and frame_length, both optional; output [batch, frames, bins, 2].
void stft(Importer& im, const N& n) {
  im.set_origin("STFT");
  const ValueId x = signal_input(im, n, 3, "signal");
  const Shape s = im.type(x).shape;
  if (s.size() != 3)
    im.fail(fmt::format("signal must be [batch, length, 1 or 2], got rank {}", s.size()));
  const int64_t step = known_int(im, n, 1, "frame_step");
  if (step < 1) im.fail(fmt::format("frame_step is {}, it must be >= 1", step));
  const bool has_window = im.has_input(n, 2);
  ValueId win = kNone;
  int64_t frame = s[1];
  if (has_window) {
    win = im.input(n, 2);
    const TensorType& wt = im.type(win);
    if (wt.shape.size() != 1)
      im.fail(fmt::format("window must be 1-D, got rank {}", wt.shape.size()));
    if (wt.dtype != im.type(x).dtype)
      im.fail(fmt::format("window is {}, signal is {}: they must match", dtype_name(wt.dtype),
                          dtype_name(im.type(x).dtype)));
    frame = wt.shape[0];
  }
  if (im.has_input(n, 3)) {
    const int64_t given = known_int(im, n, 3, "frame_length");
    if (has_window && given != frame)
      im.fail(fmt::format("frame_length {} differs from the window's length {}", given, frame));
    frame = given;
  }
  if (frame < 1 || frame > s[1])
    im.fail(fmt::format("frame_length {} must be in [1, {}] (the signal's length)", frame, s[1]));
  const bool onesided = flag(im, n, "onesided", 1);
  const int64_t frames = 1 + (s[1] - frame) / step;
  const Shape idx_shape{frames, frame};
  im.check_size({DType::kI64, idx_shape}, "the frame indices");
  std::vector<int64_t> idx(static_cast<size_t>(frames * frame));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frame; ++j) idx[static_cast<size_t>(f * frame + j)] = f * step + j;
  ValueId v = im.emit1("Gather", {x, im.constant_i64(idx, idx_shape)}, {{"axis", int64_t{1}}});
  if (has_window) {
    const ValueId w = im.emit1("Reshape", {win}, {{"shape", std::vector<int64_t>{frame, 1}}});
    v = im.emit1("Mul", {v, w});
  }
  im.bind(n, 0, dft_along(im, v, 2, frame, false, onesided));
}

}  // namespace ampx::onnx_io
