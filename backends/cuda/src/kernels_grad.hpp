// The own CUDA kernels of the training ops (docs/OPS.md, "Training ops"),
// as plain C++ launch functions beside kernels.hpp: backward kernels, the
// loss, the optimizer updates. Same contract as kernels.hpp (f32 math and
// accumulation, one rounding per output, grid-stride loops, the launch
// result returned), plus the op set's determinism rule: every reduction
// (dScale, dBias, dW, the loss, overlapping pool windows) runs in an order
// fixed by the shape alone (fixed block trees or sequential loops, never
// atomics), so a run is reproducible bit for bit on the same GPU. Row and
// channel kernels launch up to 1024 threads per block and are declared
// __launch_bounds__(1024), which caps them at 64 registers per thread: a
// launch of 1024 never fails for lack of registers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ampx/backend_api.h"
#include "kernels.hpp"

namespace ampx::cuda::kern {

// ------------------------------------------------- elementwise gradients

// dX[i] = dY[i] * f'(t[i]); t is X (Relu, Gelu, Clip) or the forward
// output Y (Sigmoid, Tanh), as docs/OPS.md defines each op's inputs.
enum class GradOp : int32_t { kRelu, kSigmoid, kTanh, kGeluErf, kGeluTanh, kClip };
struct GradParams {
  GradOp op = GradOp::kRelu;
  float lo = 0, hi = 0;  // kClip
};
cudaError_t elementwise_grad(ampx_dtype dt, const GradParams& p, const void* dy, const void* t,
                             void* dx, int64_t n, cudaStream_t stream);

// SoftmaxGrad, dX = Y * (dY - sum_axis(dY * Y)); one block per row.
cudaError_t softmax_grad(ampx_dtype dt, const SoftmaxParams& p, const void* dy, const void* y,
                         void* dx, cudaStream_t stream);

// --------------------------------------------------------- normalisation

// LayerNormGrad over rows x cols (cols: the normalised trailing dims).
// `row_stats`: f32 scratch of 2 * rows (each row's mean and 1/std, kept by
// the row pass for the column pass of dScale and dBias).
cudaError_t layernorm_grad(ampx_dtype dt, const LayerNormParams& p, const void* dy, const void* x,
                           const void* scale, void* dx, void* dscale, void* dbias, float* row_stats,
                           cudaStream_t stream);

// X viewed as [batch, channels, inner]; statistics per channel over
// batch * inner values (population variance), one block per channel.
struct BatchNormTrainParams {
  int64_t batch = 0, channels = 0, inner = 0;
  float eps = 1e-5f;
  float momentum = 0.9f;  // ONNX: running' = momentum * running + (1 - momentum) * batch
};
cudaError_t batchnorm_training(ampx_dtype dt, const BatchNormTrainParams& p, const void* x,
                               const void* scale, const void* bias, const void* running_mean,
                               const void* running_var, void* y, void* running_mean_out,
                               void* running_var_out, void* saved_mean, void* saved_invstd,
                               cudaStream_t stream);
cudaError_t batchnorm_grad(ampx_dtype dt, const BatchNormTrainParams& p, const void* dy,
                           const void* x, const void* scale, const void* saved_mean,
                           const void* saved_invstd, void* dx, void* dscale, void* dbias,
                           cudaStream_t stream);

// ---------------------------------------------------------------- windows

// MaxPoolGrad (p.max; x is the forward input) and AveragePoolGrad (x
// unused): one thread per input cell gathers the windows that reach it, in
// the reference's order, so overlapping windows add without atomics.
// H, W, OH, OW, pads and ceil_mode's output size as the forward PoolParams.
cudaError_t pool2d_grad(ampx_dtype dt, const PoolParams& p, const void* dy, const void* x, void* dx,
                        cudaStream_t stream);

// Conv2dGradWeight without cuDNN: one block per weight element, its threads
// sum over images and output pixels (fixed block tree).
cudaError_t conv2d_grad_weight_direct(ampx_dtype dt, const ConvParams& p, const void* dy,
                                      const void* x, void* dw, cudaStream_t stream);

// ------------------------------------------------------------------ loss

struct CrossEntropyParams {
  int64_t rows = 0, classes = 0;
};
// log_prob = log_softmax(logits) per row (max subtracted), row_loss[r] =
// -log_prob[r, label_r] (f32 scratch of `rows`), then one block sums
// row_loss in row order (double) into loss = the mean. A label outside
// [0, classes) sets *bad to 1.
cudaError_t softmax_cross_entropy(ampx_dtype dt, const CrossEntropyParams& p, const void* logits,
                                  const int64_t* labels, void* loss, void* log_prob,
                                  float* row_loss, int* bad, cudaStream_t stream);
// dLogits = (exp(log_prob) - onehot(label)) * dLoss / rows; dloss is the
// device scalar. A label outside [0, classes) sets *bad to 1.
cudaError_t softmax_cross_entropy_grad(ampx_dtype dt, const CrossEntropyParams& p,
                                       const void* dloss, const void* log_prob,
                                       const int64_t* labels, void* dlogits, int* bad,
                                       cudaStream_t stream);

// ------------------------------------------------------ optimizer updates

// f32 only. `hyper` is the device vector of docs/OPS.md (lr, grad_scale,
// apply[, bc1, bc2]), read by every thread: apply == 0 copies each input
// to its output (bit for bit). Each element is read before it is written,
// so outputs may alias W, M, V.
struct SgdParams {
  int64_t n = 0;
  float momentum = 0, weight_decay = 0;
  bool nesterov = false;
};
// m and m_out NULL exactly when momentum == 0.
cudaError_t sgd_update(const SgdParams& p, const float* w, const float* g, const float* hyper,
                       const float* m, float* w_out, float* m_out, cudaStream_t stream);

struct AdamParams {
  int64_t n = 0;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0;
  bool decoupled = false;
};
cudaError_t adam_update(const AdamParams& p, const float* w, const float* g, const float* m,
                        const float* v, const float* hyper, float* w_out, float* m_out,
                        float* v_out, cudaStream_t stream);

// UpdateGuard, f32 only (docs/OPS.md). update_guard_blocks: for one gradient
// of n elements, the f64 sum of squares and a non-finite flag of each of its
// ceil(n / kGuardBlock) blocks (cpu_ref's blocks), into block_sq/block_bad.
// update_guard_finish: one thread adds `blocks` such sums in order and writes
// hyper' (may alias hyper) and stats [finite, norm].
constexpr int64_t kGuardBlock = 1 << 16;
struct UpdateGuardParams {
  int64_t blocks = 0;
  int hyper = 3;  // 3 or 5
  float clip_norm = 0;
  bool skip_nonfinite = true;
};
cudaError_t update_guard_blocks(const float* g, int64_t n, double* block_sq, int* block_bad,
                                cudaStream_t stream);
cudaError_t update_guard_finish(const UpdateGuardParams& p, const double* block_sq,
                                const int* block_bad, const float* hyper, float* hyper_out,
                                float* stats, cudaStream_t stream);

// TensorStats (docs/OPS.md): tensor_stats_count adds one input's counts to
// acc [4] (zeroed first: the largest finite magnitude's bits, non-finite,
// nonzero finite, and below-tiny counts); `kind` 0 f32, 1 f16, 2 bf16; inf
// and tiny are magnitude patterns of that layout (ampx/half.hpp).
// tensor_stats_finish writes the input's row [amax, shares] from acc.
cudaError_t tensor_stats_count(const void* x, int64_t n, int kind, unsigned inf, unsigned tiny,
                               unsigned long long* acc, cudaStream_t stream);
cudaError_t tensor_stats_finish(const unsigned long long* acc, int kind, int64_t n, float* row,
                                cudaStream_t stream);

}  // namespace ampx::cuda::kern
