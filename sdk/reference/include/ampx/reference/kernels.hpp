// The reference CPU kernels: every op of docs/OPS.md, the numerical oracle of
// ampx.
//
// Precision contract (keep it true):
//  - f32 tensors are computed in f32.
//  - f16/bf16 tensors are stored as 16-bit; every kernel widens its inputs to
//    f32, computes (and accumulates) in f32, and rounds each output element to
//    16-bit exactly once, round-to-nearest-even, when it is stored. That is
//    "emulated" 16-bit.
//  - Pure data movement (Reshape, Flatten, Transpose, Concat, Slice, Gather,
//    Dropout) copies elements bit-exactly in any dtype.
//  - Elementwise ops (Relu, Sigmoid, Tanh, Gelu, Clip, Add, Sub, Mul, Div) also
//    accept f64, computed in f64.
//  - float64 mode (KernelOptions::f64_compute, off by default): every other
//    float op takes f64 too and computes in f64 throughout (accumulations
//    included): the contractions, normalisations, pools, reductions, the
//    backward kernels and the loss; not the optimizer updates nor
//    UpdateGuard (f32 master weights). The same templated code as the f32
//    kernels, instantiated for double, so an f64 result is the f32
//    computation without its roundings: the oracle of the float64 gradient
//    check. Only the cpu_ref plugin turns it on (docs/OPS.md).
//  - Cast rounds to nearest even with a single rounding from the source value
//    (float -> int truncates toward zero, NaN -> 0, saturating).
//
// Results do not depend on the number of threads: every output element is
// computed by one thread, in a fixed order.
#pragma once

#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "ampx/backend_api.h"
#include "ampx/opset/output_types.hpp"
#include "ampx/opset/validate.hpp"

namespace ampx::reference {

// A kernel prepared for one node description. Not thread-safe: one run() at a
// time (it owns scratch memory).
class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  // inputs/outputs: host pointers to dense row-major tensors exactly as
  // described at creation, in node order. Outputs must not overlap inputs.
  // Pointers must be aligned to their element size. May throw
  // std::invalid_argument for data-dependent errors (a Gather index out of
  // range).
  virtual void run(std::span<const void* const> inputs, std::span<void* const> outputs) = 0;
  // What runs the node, for profiles (ABI 1.4 kernel reports): these
  // kernels are loops; a kernel on a library names its primitive and
  // implementation ("convolution_forward jit:avx2"). For a kernel that
  // chooses per run: the last run's.
  virtual std::string implementation() const { return "loop: reference kernel"; }
};

// Thrown by make_kernel when the node is well formed but has no kernel here
// (unknown op type, dtype not handled). Other validation failures throw plain
// std::invalid_argument. Messages always start with "node '<name>' (<op>): ".
using UnsupportedNode = opset::UnsupportedNode;

// What the kernels accept beyond the op set's dtype rule: the op set's
// validation options (opset::ValidateOptions). With f64_compute, the
// float64 mode above; without (the default), f64 only where the op set
// allows it (elementwise ops, data movement, Cast, TensorStats), so that a
// plugin falling back to these kernels (backends/onednn) or running them
// under its own policy (test_native) keeps answering f64 compute nodes
// `unsupported` as the op set says.
using KernelOptions = opset::ValidateOptions;

// Validates the node with the op set (opset::validate with `options`:
// arity, attributes, ranks, dims, the dtype rule of docs/OPS.md, the
// declared outputs) and returns a kernel for it. Cheap: scratch memory is
// allocated on the first run(). The node description is only borrowed for
// the call.
std::unique_ptr<CpuKernel> make_kernel(const ampx_node_desc& node,
                                       const KernelOptions& options = {});

// True when make_kernel(node, options) would succeed; otherwise false and,
// if `why` is not NULL, the reason. Never throws.
bool can_run(const ampx_node_desc& node, std::string* why,
             const KernelOptions& options = {}) noexcept;

// Threads a single kernel may use. Default: the AMPX_CPU_REF_THREADS
// environment variable if set (>= 1), else std::thread::hardware_concurrency().
int max_threads() noexcept;
void set_max_threads(int n) noexcept;  // n < 1 restores the default

// The loops that have an AVX2 copy (TensorStats, UpdateGuard) take it when
// the CPU has AVX2, unless AMPX_CPU_REF_ISA=baseline is set or
// allow_avx2(false) was called. Both copies give the same bits (tested).
void allow_avx2(bool allowed) noexcept;

// How the kernels' fork-join steps run their chunks. A runner must call
// chunk(ctx, i) once for every i in [0, chunks), on whatever threads it
// likes, and return when all calls have returned; chunk never throws, and
// which thread runs a chunk never changes the result. The default (nullptr)
// starts std::threads for each step and joins them. A plugin whose other
// kernels run on an OpenMP pool (backends/onednn) passes a runner on that
// pool: fresh threads beside the pool's still-spinning workers get half the
// cores (the MLP's finite check took twice as long there). Global to one
// copy of this static library, which each plugin has to itself.
using ParallelRunner = void (*)(int64_t chunks, void* ctx, void (*chunk)(void* ctx, int64_t i));
void set_parallel_runner(ParallelRunner runner) noexcept;
ParallelRunner parallel_runner() noexcept;

}  // namespace ampx::reference
