// The capability answers as a function of the device: answer() only reads a
// DeviceInfo, the cuDNN library state and the node, so these run without a
// GPU (in CI) for pretend devices of several architectures.
#include <iostream>
#include <set>

#include "allocator.hpp"
#include "capability.hpp"
#include "cuda_harness.hpp"
#include "cuda_onnx_ops.hpp"
#include "device.hpp"
#include "op_cases.hpp"
#include "ops.hpp"

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
constexpr ampx_dtype F16 = AMPX_DTYPE_F16;
constexpr ampx_dtype BF16 = AMPX_DTYPE_BF16;

cuda::DeviceInfo device(int cc) {
  cuda::DeviceInfo d;
  d.cc_major = cc / 10;
  d.cc_minor = cc % 10;
  return d;
}

NodeBuilder matmul(ampx_dtype dt) {
  NodeBuilder nb("MatMul", "mm");
  nb.input(dt, {8, 16}).input(dt, {16, 4}).output(dt, {8, 4});
  return nb;
}
NodeBuilder conv(ampx_dtype dt, std::vector<int64_t> pads) {
  NodeBuilder nb("Conv2d", "conv");
  nb.input(dt, {1, 4, 8, 8}).input(dt, {6, 4, 3, 3}).input(dt, {6});
  const int64_t oh = 8 + pads[0] + pads[2] - 2, ow = 8 + pads[1] + pads[3] - 2;
  nb.output(dt, {1, 6, oh, ow}).attr_ints("pads", pads);
  return nb;
}
NodeBuilder softmax(ampx_dtype dt) {
  NodeBuilder nb("Softmax", "sm");
  nb.input(dt, {4, 32}).output(dt, {4, 32});
  return nb;
}
NodeBuilder transpose(ampx_dtype dt) {
  NodeBuilder nb("Transpose", "t");
  nb.input(dt, {2, 3}).output(dt, {3, 2});
  return nb;
}

bool find_op_known(const std::string& op) {
  return cuda::find_op(op) != nullptr;
}

cuda::Answer ask(NodeBuilder nb, int cc, const cuda::CudnnLibrary& cudnn) {
  const cuda::Answer a = cuda::answer(nb.desc(), device(cc), cudnn);
  std::cout << "[ answer   ] sm_" << cc << " " << nb.op_type() << ": " << support_name(a.support)
            << " (" << a.note << ")\n";
  return a;
}

TEST(CudaAnswers, FollowTheArchitecture) {
  const cuda::CudnnLibrary cudnn(true);
  for (int cc : {75, 80, 90}) {
    SCOPED_TRACE("sm_" + std::to_string(cc));
    // f32 runs everywhere; f16 tensor cores from sm_70, bf16 from sm_80.
    EXPECT_EQ(ask(matmul(F32), cc, cudnn).support, AMPX_SUPPORT_NATIVE);
    EXPECT_EQ(ask(matmul(F16), cc, cudnn).support, AMPX_SUPPORT_NATIVE);
    const cuda::Answer bf = ask(matmul(BF16), cc, cudnn);
    EXPECT_EQ(bf.support, cc >= 80 ? AMPX_SUPPORT_NATIVE : AMPX_SUPPORT_UNSUPPORTED) << bf.note;
    if (cc < 80) {
      EXPECT_NE(bf.note.find("sm_80"), std::string::npos) << bf.note;
    }
    EXPECT_EQ(ask(softmax(F16), cc, cudnn).support, AMPX_SUPPORT_NATIVE);
    EXPECT_EQ(ask(softmax(BF16), cc, cudnn).support,
              cc >= 80 ? AMPX_SUPPORT_NATIVE : AMPX_SUPPORT_UNSUPPORTED);
    // Bit copies do not care about the dtype's arithmetic.
    EXPECT_EQ(ask(transpose(BF16), cc, cudnn).support, AMPX_SUPPORT_NATIVE);
    EXPECT_EQ(ask(transpose(AMPX_DTYPE_I64), cc, cudnn).support, AMPX_SUPPORT_NATIVE);
  }
  // Before tensor cores: no f16 GEMM.
  EXPECT_EQ(ask(matmul(F16), 61, cudnn).support, AMPX_SUPPORT_UNSUPPORTED);
}

TEST(CudaAnswers, ConvolutionSaysWhetherCudnnRunsIt) {
  const cuda::CudnnLibrary with(true), without(false);
  ASSERT_FALSE(without.loaded());
  EXPECT_NE(without.description().find("cudnn=off"), std::string::npos) << without.description();
  if (with.loaded()) {
    const cuda::Answer a = ask(conv(F16, {1, 1, 1, 1}), 90, with);
    EXPECT_EQ(a.support, AMPX_SUPPORT_NATIVE) << a.note;
    EXPECT_NE(a.note.find("cuDNN"), std::string::npos) << a.note;
    // Asymmetric pads: the legacy cuDNN API cannot, the direct kernel can.
    const cuda::Answer asym = ask(conv(F16, {1, 0, 0, 1}), 90, with);
    EXPECT_EQ(asym.support, AMPX_SUPPORT_EMULATED) << asym.note;
    EXPECT_NE(asym.note.find("asymmetric"), std::string::npos) << asym.note;
  } else {
    std::cout << "[ cudnn    ] " << with.description() << "\n";
  }
  const cuda::Answer off = ask(conv(F16, {1, 1, 1, 1}), 90, without);
  EXPECT_EQ(off.support, AMPX_SUPPORT_EMULATED) << off.note;
  EXPECT_NE(off.note.find("direct conv kernel"), std::string::npos) << off.note;
  EXPECT_EQ(ask(conv(F32, {1, 1, 1, 1}), 90, without).support, AMPX_SUPPORT_NATIVE);
}

TEST(CudaAnswers, UnsupportedAlwaysSaysWhy) {
  const cuda::CudnnLibrary cudnn(false);
  NodeBuilder f64("Relu", "r");
  f64.input(AMPX_DTYPE_F64, {4}).output(AMPX_DTYPE_F64, {4});
  NodeBuilder deep("Relu", "r");
  const std::vector<int64_t> d9(9, 1);
  deep.input(F32, d9).output(F32, d9);
  NodeBuilder cast("Cast", "c");
  cast.input(AMPX_DTYPE_I64, {4}).output(F16, {4}).attr_int("to", F16);
  NodeBuilder bad("Relu", "r");
  bad.input(F32, {4}).output(F32, {5});
  NodeBuilder unknown("Frobnicate", "f");
  unknown.input(F32, {4}).output(F32, {4});
  NodeBuilder empty_k("MatMul", "mm");
  empty_k.input(F32, {3, 0}).input(F32, {0, 2}).output(F32, {3, 2});
  for (NodeBuilder* nb : {&f64, &deep, &cast, &bad, &unknown, &empty_k}) {
    const cuda::Answer a = ask(*nb, 90, cudnn);
    EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << nb->op_type();
    EXPECT_FALSE(a.note.empty()) << nb->op_type();
  }
  // A device this build has no code for: everything unsupported, with why.
  cuda::DeviceInfo old = device(90);
  old.kernel_image_error = "no kernel image is available for execution on the device";
  const cuda::Answer a = cuda::answer(softmax(F32).desc(), old, cudnn);
  EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_EQ(a.note, old.kernel_image_error);
}

// The training ops of the catalogue (add_training_cases): the ones with a
// CUDA kernel are native in f32, f16 and (sm_80+) bf16, the updates in f32
// only; the weight gradient follows the forward convolution (cuDNN: native,
// the direct kernel: 16-bit emulated); the rest say why they are declined.
TEST(CudaAnswers, TrainingOps) {
  const cuda::CudnnLibrary with(true), without(false);
  const std::set<std::string> declined = {"SliceGrad", "GatherGrad", "DropoutTraining"};
  int answered = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    for (ampx_dtype dt : {F32, F16, BF16}) {
      Rng rng(3);
      op_cases::Case c;
      make(rng, dt, c);
      const std::string op = c.nb.op_type();
      if (!op_cases::is_training_op(op)) break;
      SCOPED_TRACE(name + " " + dtype_str(dt));
      // The updates and UpdateGuard: their cases are f32; TensorStats' case
      // has fixed dtypes and computes nothing in 16-bit.
      const bool update =
          op == "SgdUpdate" || op == "AdamUpdate" || op == "UpdateGuard" || op == "TensorStats";
      const bool known = declined.count(op) == 0 && find_op_known(op);
      for (int cc : {75, 90}) {
        const cuda::Answer a = cuda::answer(c.nb.desc(), device(cc), without);
        ++answered;
        if (!known) {
          EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
          EXPECT_NE(a.note.find("no CUDA kernel"), std::string::npos) << a.note;
          continue;
        }
        const ampx_dtype computed = update ? F32 : dt;
        if (computed == BF16 && cc < 80) {
          EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
          continue;
        }
        // Without cuDNN the weight gradient is the direct kernel: 16-bit emulated.
        const bool direct_16bit = op == "Conv2dGradWeight" && computed != F32;
        EXPECT_EQ(a.support, direct_16bit ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_NATIVE) << a.note;
        EXPECT_GT(a.cost_us, 0.0);
      }
    }
  }
  EXPECT_GT(answered, 0) << "no training cases in the catalogue";
  // The updates are f32 only: a 16-bit one is refused by the op set's rule.
  NodeBuilder sgd16("SgdUpdate", "sgd");
  sgd16.input(F16, {4}).input(F16, {4}).input(F16, {3}).output(F16, {4});
  const cuda::Answer a16 = ask(sgd16, 90, without);
  EXPECT_EQ(a16.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_FALSE(a16.note.empty());
  // Symmetric pads: cuDNN's backward-filter when it is loaded.
  NodeBuilder dw("Conv2dGradWeight", "dw");
  dw.input(F16, {2, 6, 8, 8}).input(F16, {2, 4, 8, 8}).output(F16, {6, 4, 3, 3});
  dw.attr_ints("kernel_shape", {3, 3}).attr_ints("pads", {1, 1, 1, 1});
  if (with.loaded()) {
    const cuda::Answer a = ask(dw, 90, with);
    EXPECT_EQ(a.support, AMPX_SUPPORT_NATIVE) << a.note;
    EXPECT_NE(a.note.find("cuDNN"), std::string::npos) << a.note;
  }
  EXPECT_EQ(ask(dw, 90, without).support, AMPX_SUPPORT_EMULATED);
  // With its bias gradient as a second output (the host's fusion asks this
  // form): no kernel writes dB here, so unsupported, saying why, and the
  // host keeps the ReduceSum.
  dw.output(F16, {6}).attr_int("bias_gradient", 1);
  for (const cuda::CudnnLibrary* lib : {&with, &without}) {
    const cuda::Answer a = ask(dw, 90, *lib);
    EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
    EXPECT_NE(a.note.find("bias_gradient"), std::string::npos) << a.note;
  }
}

// The later ONNX ops with a CUDA kernel (cuda_onnx_ops.hpp), every case of
// the catalogue: native in f32, f16 and (sm_80+) bf16, the integer forms
// and BitCast on every GPU; f64 and the importer ops without a kernel say
// why they are declined.
TEST(CudaAnswers, LaterOnnxOps) {
  const cuda::CudnnLibrary cudnn(false);
  std::set<std::string> seen;
  for (const auto& [name, make] : op_cases::cases()) {
    for (ampx_dtype dt : {F32, F16, BF16}) {
      Rng rng(3);
      op_cases::Case c;
      make(rng, dt, c);
      const std::string op = c.nb.op_type();
      if (!cuda_runs_onnx_op(op)) break;
      seen.insert(op);
      SCOPED_TRACE(name + " " + dtype_str(dt));
      const ampx_node_desc& d = c.nb.desc();
      bool has_float = false;
      for (size_t i = 0; i < d.num_inputs; ++i)
        has_float = has_float || plugin_support::is_float_dtype(d.inputs[i].dtype);
      for (size_t i = 0; i < d.num_outputs; ++i)
        has_float = has_float || plugin_support::is_float_dtype(d.outputs[i].dtype);
      // BitCast copies bytes: no arithmetic, every GPU.
      const bool needs_bf16 = op != "BitCast" && has_float && dt == BF16;
      for (int cc : {75, 90}) {
        const cuda::Answer a = cuda::answer(c.nb.desc(), device(cc), cudnn);
        if (needs_bf16 && cc < 80) {
          EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
          EXPECT_NE(a.note.find("sm_80"), std::string::npos) << a.note;
        } else {
          EXPECT_EQ(a.support, AMPX_SUPPORT_NATIVE) << "sm_" << cc << ": " << a.note;
        }
        EXPECT_TRUE(cuda::find_op(op) != nullptr);
      }
    }
  }
  // Every op of the list has a case in the catalogue.
  for (const char* op : {"Sin",         "Cos",           "Tan",
                         "Asin",        "Acos",          "Atan",
                         "Sinh",        "Cosh",          "Asinh",
                         "Acosh",       "Atanh",         "LeakyRelu",
                         "HardSigmoid", "HardSwish",     "Erf",
                         "Sqrt",        "Reciprocal",    "Exp",
                         "Log",         "Floor",         "Ceil",
                         "Round",       "Softplus",      "Mish",
                         "BitShift",    "BitwiseAnd",    "BitwiseOr",
                         "BitwiseXor",  "BitwiseNot",    "BitCast",
                         "CumProd",     "RMSNorm",       "RotaryEmbedding",
                         "Col2Im",      "MaxPoolIndices"})
    EXPECT_EQ(seen.count(op), 1u) << op << " has no catalogue case";
  // The paths the catalogue misses: valid nodes (cpu_ref runs them), native here.
  const Plugin ref(plugin_path("cpu_ref"));
  for (const OnnxExtraCase& e : onnx_extra_cases()) {
    for (ampx_dtype dt : {F32, F16, BF16}) {
      if (dt != F32 && !e.float_case) break;
      SCOPED_TRACE(e.name + " " + dtype_str(dt));
      Rng rng(23);
      op_cases::Case c;
      e.make(rng, dt, c);
      const cuda::Answer a = cuda::answer(c.nb.desc(), device(90), cudnn);
      EXPECT_EQ(a.support, AMPX_SUPPORT_NATIVE) << a.note;
      EXPECT_NO_THROW(run_on(ref, c.nb, c.inputs));
    }
  }
  // Integer CumProd (wrapping) and every integer width of the bit ops.
  for (ampx_dtype it : {AMPX_DTYPE_I8, AMPX_DTYPE_U8, AMPX_DTYPE_I16, AMPX_DTYPE_U16,
                        AMPX_DTYPE_I32, AMPX_DTYPE_U32, AMPX_DTYPE_I64, AMPX_DTYPE_U64}) {
    SCOPED_TRACE(dtype_str(it));
    NodeBuilder cp("CumProd", "cp");
    cp.input(it, {3, 4}).output(it, {3, 4}).attr_int("axis", 1);
    EXPECT_EQ(ask(cp, 75, cudnn).support, AMPX_SUPPORT_NATIVE);
    NodeBuilder sh("BitShift", "sh");
    sh.input(it, {3, 4}).input(it, {4}).output(it, {3, 4}).attr_str("direction", "RIGHT");
    EXPECT_EQ(ask(sh, 75, cudnn).support, AMPX_SUPPORT_NATIVE);
  }
  // f64 has no CUDA kernel; the op set refuses a float BitwiseAnd.
  NodeBuilder cp64("CumProd", "cp");
  cp64.input(AMPX_DTYPE_F64, {4}).output(AMPX_DTYPE_F64, {4}).attr_int("axis", 0);
  NodeBuilder and32("BitwiseAnd", "and");
  and32.input(F32, {4}).input(F32, {4}).output(F32, {4});
  for (NodeBuilder* nb : {&cp64, &and32}) {
    const cuda::Answer a = ask(*nb, 90, cudnn);
    EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << nb->op_type();
    EXPECT_FALSE(a.note.empty()) << nb->op_type();
  }
}

// The importer ops with CUDA kernels (Attention, LinearAttention,
// GridSample, Det): every catalogue case native in f32, f16 and (sm_80+)
// bf16; the limits (Det's matrix size, f64) unsupported with a reason.
TEST(CudaAnswers, AttentionGridSampleDet) {
  const cuda::CudnnLibrary cudnn(false);
  const std::set<std::string> ops = {"Attention", "LinearAttention", "GridSample", "Det"};
  int answered = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    for (ampx_dtype dt : {F32, F16, BF16}) {
      Rng rng(3);
      op_cases::Case c;
      make(rng, dt, c);
      if (ops.count(c.nb.op_type()) == 0) break;
      SCOPED_TRACE(name + " " + dtype_str(dt));
      for (int cc : {75, 90}) {
        const cuda::Answer a = cuda::answer(c.nb.desc(), device(cc), cudnn);
        ++answered;
        EXPECT_EQ(a.support, dt == BF16 && cc < 80 ? AMPX_SUPPORT_UNSUPPORTED : AMPX_SUPPORT_NATIVE)
            << a.note;
      }
    }
  }
  EXPECT_GE(answered, 4 * 3 * 2) << "no Attention/LinearAttention/GridSample/Det cases";
  const auto det = [](int64_t m, ampx_dtype dt) {
    NodeBuilder nb("Det", "det");
    nb.input(dt, {3, m, m}).output(dt, {3});
    return nb;
  };
  const cuda::Answer edge = ask(det(cuda::kern::kDetMaxM, F16), 90, cudnn);
  EXPECT_EQ(edge.support, AMPX_SUPPORT_NATIVE) << edge.note;
  EXPECT_NE(edge.note.find("f64"), std::string::npos) << edge.note;
  const cuda::Answer big = ask(det(cuda::kern::kDetMaxM + 1, F32), 90, cudnn);
  EXPECT_EQ(big.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(big.note.find("larger than 64 x 64"), std::string::npos) << big.note;
  const cuda::Answer f64 = ask(det(4, AMPX_DTYPE_F64), 90, cudnn);
  EXPECT_EQ(f64.support, AMPX_SUPPORT_UNSUPPORTED);
  EXPECT_NE(f64.note.find("f64"), std::string::npos) << f64.note;
}

TEST(CudaAnswers, OptionsAndAllocatorRounding) {
  EXPECT_TRUE(cuda::parse_options(nullptr).cudnn);
  EXPECT_FALSE(cuda::parse_options("cudnn=off").cudnn);
  EXPECT_THROW(cuda::parse_options("cudnn=2"), std::invalid_argument);
  EXPECT_EQ(cuda::CachingAllocator::round_size(0), 512u);
  EXPECT_EQ(cuda::CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(cuda::CachingAllocator::round_size((1u << 20) + 1), 2u << 20);
}

}  // namespace
}  // namespace ampx::test
