// LSTM, GRU and RNN (docs/OPS.md): ONNX's equations in layout 0, every
// direction, initial states, peepholes, sequence lengths, clip and the
// activation functions (opset::recurrent_spec reads them). Computed in T
// (f32, or f64 in the float64 mode); 16-bit arrives widened.
//
// Per direction, the input projection X·W^T of every step is one GEMM over
// all T·N rows; each step then multiplies the state by R^T (one more for
// GRU's reset gate without linear_before_reset). A sequence n of length L
// runs steps 0..L-1 (reverse: L-1 down to 0); Y is 0 past L and Y_h / Y_c
// keep its last state (0 when L is 0), as in ONNX Runtime.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "ampx/opset/recurrent.hpp"
#include "common.hpp"
#include "gemm.hpp"
#include "parallel.hpp"

namespace ampx::reference::detail {
namespace {

using opset::RecurrentKind;
using opset::RecurrentSpec;

template <class T>
class RecurrentKernel final : public CpuKernel {
 public:
  RecurrentKernel(RecurrentSpec s, int64_t steps, int64_t batch, int64_t input, int lens_slot,
                  ampx_dtype lens_dtype, std::string where)
      : s_(std::move(s)),
        T_(steps),
        N_(batch),
        I_(input),
        H_(s_.hidden),
        G_(s_.gates * s_.hidden),
        lens_slot_(lens_slot),
        lens_dtype_(lens_dtype),
        gru_reset_before_(s_.kind == RecurrentKind::kGru && !s_.linear_before_reset),
        where_(std::move(where)) {}

  void run(std::span<const void* const> in, std::span<void* const> out) override {
    const bool lstm = s_.kind == RecurrentKind::kLstm;
    const auto* x = static_cast<const T*>(in[0]);
    const auto* w = static_cast<const T*>(in[1]);
    const auto* r = static_cast<const T*>(in[2]);
    const auto* b = static_cast<const T*>(in[3]);
    const auto* h0 = static_cast<const T*>(in[4]);
    const T* c0 = lstm ? static_cast<const T*>(in[5]) : nullptr;
    const T* p = lstm ? static_cast<const T*>(in[6]) : nullptr;
    auto* y = static_cast<T*>(out[0]);
    auto* yh = static_cast<T*>(out[1]);
    T* yc = lstm ? static_cast<T*>(out[2]) : nullptr;
    read_lengths(lens_slot_ >= 0 ? in[static_cast<size_t>(lens_slot_)] : nullptr);

    const int64_t D = s_.directions;
    std::fill(y, y + T_ * D * N_ * H_, T(0));
    xw_.resize(static_cast<size_t>(T_ * N_ * G_));
    hr_.resize(static_cast<size_t>(N_ * G_));
    h_.resize(static_cast<size_t>(N_ * H_));
    c_.resize(static_cast<size_t>(N_ * H_));
    rh_.resize(static_cast<size_t>(N_ * H_));
    rhr_.resize(static_cast<size_t>(N_ * H_));
    for (int64_t d = 0; d < D; ++d) {
      const bool rev = D == 2 ? d == 1 : s_.reverse;
      const T* wd = w + d * G_ * I_;
      const T* rd = r + d * G_ * H_;
      const T* wb = b + d * 2 * G_;
      const T* rb = wb + G_;
      // XW[t·N + n][g] = Σ_i X[t][n][i] · W[d][g][i]
      std::fill(xw_.begin(), xw_.end(), T(0));
      gemm(GemmArgs<T>{.M = T_ * N_,
                       .N = G_,
                       .K = I_,
                       .A = x,
                       .rsA = I_,
                       .csA = 1,
                       .B = wd,
                       .rsB = 1,
                       .csB = I_,
                       .C = xw_.data(),
                       .ldc = G_},
           threads_for(2.0 * static_cast<double>(T_ * N_ * G_ * I_)));
      std::copy(h0 + d * N_ * H_, h0 + (d + 1) * N_ * H_, h_.begin());
      if (lstm) std::copy(c0 + d * N_ * H_, c0 + (d + 1) * N_ * H_, c_.begin());
      for (int64_t step = 0; step < T_; ++step) {
        // GRU without linear_before_reset multiplies (r ⊙ H), not H, by
        // R_h (reset_then_multiply): H·R^T only for z and r then.
        multiply_state(h_.data(), rd, 0, gru_reset_before_ ? 2 * H_ : G_, hr_.data(), G_);
        if (gru_reset_before_) reset_then_multiply(d, step, rd, rb, wb);
        for (int64_t n = 0; n < N_; ++n) {
          const int64_t len = lens_[static_cast<size_t>(n)];
          if (step >= len) continue;
          const int64_t t = rev ? len - 1 - step : step;
          const T* g_in = xw_.data() + (t * N_ + n) * G_;
          const T* g_rec = hr_.data() + n * G_;
          T* h = h_.data() + n * H_;
          if (lstm)
            lstm_cell(d, g_in, g_rec, wb, rb, p + d * 3 * H_, h, c_.data() + n * H_);
          else if (s_.kind == RecurrentKind::kGru)
            gru_cell(d, n, g_in, g_rec, wb, rb, h);
          else
            rnn_cell(d, g_in, g_rec, wb, rb, h);
          std::copy(h, h + H_, y + ((t * D + d) * N_ + n) * H_);
        }
      }
      // A sequence of length 0 ends with zero states, not its initial ones
      // (ONNX Runtime's choice; ONNX does not say).
      for (int64_t n = 0; n < N_; ++n) {
        if (lens_[static_cast<size_t>(n)] > 0) continue;
        std::fill_n(h_.begin() + n * H_, H_, T(0));
        if (lstm) std::fill_n(c_.begin() + n * H_, H_, T(0));
      }
      std::copy(h_.begin(), h_.end(), yh + d * N_ * H_);
      if (lstm) std::copy(c_.begin(), c_.end(), yc + d * N_ * H_);
    }
  }

 private:
  T clip(T v) const {
    if (s_.clip <= 0) return v;
    const auto c = static_cast<T>(s_.clip);
    return std::min(std::max(v, -c), c);
  }

  // out[n·ldc + g - g0] = Σ_k state[n][k] · R[g][k] for g in [g0, g1).
  void multiply_state(const T* state, const T* rd, int64_t g0, int64_t g1, T* out, int64_t ldc) {
    const int64_t cols = g1 - g0;
    for (int64_t n = 0; n < N_; ++n) std::fill_n(out + n * ldc, cols, T(0));
    gemm(GemmArgs<T>{.M = N_,
                     .N = cols,
                     .K = H_,
                     .A = state,
                     .rsA = H_,
                     .csA = 1,
                     .B = rd + g0 * H_,
                     .rsB = 1,
                     .csB = H_,
                     .C = out,
                     .ldc = ldc},
         threads_for(2.0 * static_cast<double>(N_ * cols * H_)));
  }

  // GRU without linear_before_reset: (r ⊙ H)·Rh^T, r from this step's
  // z/r pre-activations (rows that are past their length compute too:
  // their results are never used).
  void reset_then_multiply(int64_t d, int64_t step, const T* rd, const T* rb, const T* wb) {
    const bool rev = s_.directions == 2 ? d == 1 : s_.reverse;
    const auto& f = s_.f(static_cast<int>(d), 0);
    for (int64_t n = 0; n < N_; ++n) {
      const int64_t len = lens_[static_cast<size_t>(n)];
      const int64_t t = step < len ? (rev ? len - 1 - step : step) : 0;
      const T* g_in = xw_.data() + (t * N_ + n) * G_;
      const T* g_rec = hr_.data() + n * G_;
      for (int64_t k = 0; k < H_; ++k) {
        const T rg = f(clip(g_in[H_ + k] + g_rec[H_ + k] + wb[H_ + k] + rb[H_ + k]));
        rh_[static_cast<size_t>(n * H_ + k)] = rg * h_[static_cast<size_t>(n * H_ + k)];
      }
    }
    multiply_state(rh_.data(), rd, 2 * H_, 3 * H_, rhr_.data(), H_);
  }

  void lstm_cell(int64_t d, const T* gi, const T* gr, const T* wb, const T* rb, const T* p, T* h,
                 T* c) const {
    const auto& f = s_.f(static_cast<int>(d), 0);
    const auto& g = s_.f(static_cast<int>(d), 1);
    const auto& hf = s_.f(static_cast<int>(d), 2);
    const int64_t H = H_;
    for (int64_t k = 0; k < H; ++k) {
      // Gate order i, o, f, c; peepholes i, o, f.
      auto pre = [&](int gate) {
        return gi[gate * H + k] + gr[gate * H + k] + wb[gate * H + k] + rb[gate * H + k];
      };
      const T cp = c[k];
      const T it = f(clip(pre(0) + p[k] * cp));
      const T ft = s_.input_forget ? T(1) - it : f(clip(pre(2) + p[2 * H + k] * cp));
      const T ct = g(clip(pre(3)));
      const T cn = ft * cp + it * ct;
      const T ot = f(clip(pre(1) + p[H + k] * cn));
      c[k] = cn;
      h[k] = ot * hf(cn);
    }
  }

  void gru_cell(int64_t d, int64_t n, const T* gi, const T* gr, const T* wb, const T* rb,
                T* h) const {
    const auto& f = s_.f(static_cast<int>(d), 0);
    const auto& g = s_.f(static_cast<int>(d), 1);
    const int64_t H = H_;
    for (int64_t k = 0; k < H; ++k) {
      // Gate order z, r, h.
      const T zt = f(clip(gi[k] + gr[k] + wb[k] + rb[k]));
      T ht;
      if (s_.linear_before_reset) {
        const T rt = f(clip(gi[H + k] + gr[H + k] + wb[H + k] + rb[H + k]));
        ht = g(clip(gi[2 * H + k] + rt * (gr[2 * H + k] + rb[2 * H + k]) + wb[2 * H + k]));
      } else {
        ht = g(clip(gi[2 * H + k] + rhr_[static_cast<size_t>(n * H + k)] + rb[2 * H + k] +
                    wb[2 * H + k]));
      }
      h[k] = (T(1) - zt) * ht + zt * h[k];
    }
  }

  void rnn_cell(int64_t d, const T* gi, const T* gr, const T* wb, const T* rb, T* h) const {
    const auto& f = s_.f(static_cast<int>(d), 0);
    for (int64_t k = 0; k < H_; ++k) h[k] = f(clip(gi[k] + gr[k] + wb[k] + rb[k]));
  }

  void read_lengths(const void* lens) {
    lens_.assign(static_cast<size_t>(N_), T_);
    if (!lens) return;
    for (int64_t n = 0; n < N_; ++n) {
      const int64_t l = lens_dtype_ == AMPX_DTYPE_I64 ? static_cast<const int64_t*>(lens)[n]
                                                      : static_cast<const int32_t*>(lens)[n];
      if (l < 0 || l > T_)
        throw std::invalid_argument(where_ + ": sequence_lens[" + std::to_string(n) + "] is " +
                                    std::to_string(l) + ", outside [0, " + std::to_string(T_) +
                                    "]");
      lens_[static_cast<size_t>(n)] = l;
    }
  }

  RecurrentSpec s_;
  int64_t T_, N_, I_, H_, G_;
  int lens_slot_;
  ampx_dtype lens_dtype_;
  bool gru_reset_before_;  // GRU without linear_before_reset
  std::string where_;
  std::vector<int64_t> lens_;
  std::vector<T> xw_, hr_, h_, c_, rh_, rhr_;
};

}  // namespace

std::unique_ptr<CpuKernel> make_recurrent(Ctx& c) {
  // Shapes and attributes were checked by the op set (infer_recurrent).
  const RecurrentSpec s = opset::recurrent_spec(c.v);
  const int fixed = s.kind == RecurrentKind::kLstm ? 7 : 5;
  const auto& x = c.in[0].dims;
  const bool lens = static_cast<int>(c.in.size()) > fixed;
  return typed<RecurrentKernel>(c, s, x[0], x[1], x[2], lens ? fixed : -1,
                                lens ? c.in[static_cast<size_t>(fixed)].dtype : AMPX_DTYPE_I64,
                                c.v.where());
}

}  // namespace ampx::reference::detail
