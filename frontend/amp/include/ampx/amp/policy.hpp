// What the user asked for: an amp level with MindSpore semantics, optional
// custom lists, per-node overrides and the 16-bit type. Pure policy: nothing
// here knows about devices.
#pragma once

#include <ampx/ir/dtype.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/ir/op_type.hpp>

#include <array>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ampx {

enum class AmpLevel { kO0, kO1, kO2, kO3, kAuto };

std::string_view amp_level_name(AmpLevel level);  // "O0".."O3", "auto"
// Throws std::invalid_argument "unknown amp level 'x' (expected O0, O1, O2, O3 or auto)".
AmpLevel parse_amp_level(std::string_view text);

// Per-node override: `pattern` is a node name, or a name prefix ending in '*'.
struct NodeOverride {
  std::string pattern;
  bool force_16bit = false;  // false: keep f32
  bool matches(std::string_view node_name) const;
};
// Checks an override pattern; throws std::invalid_argument naming it.
void validate_override_pattern(std::string_view pattern, std::string_view flag);

struct AmpPolicy {
  AmpLevel level = AmpLevel::kO0;
  DType half = DType::kF16;  // f16 or bf16
  // Custom lists replace the level's default list (as MindSpore's
  // custom_mixed_precision does). Used by O1 (white) / O2 (black) / auto (both).
  std::optional<std::vector<OpType>> white_list;
  std::optional<std::vector<OpType>> black_list;
  std::vector<NodeOverride> overrides;  // later entries win
  // Forward nodes (layers) that training's automatic FP32 fallback moved
  // to f32 after they overflowed (docs/TRAINING.md, "Overflow
  // diagnostics"): f32 whatever the level, the lists or an override say,
  // and their backward nodes follow them.
  std::vector<std::string> overflow_fallback;
};

// MindSpore's default lists mapped onto ampx's op set (docs/PLANNER.md).
std::vector<OpType> default_white_list();  // O1: Conv2d, MatMul, Gemm, Relu
// O2: BatchNorm, LayerNorm; in training BatchNormTraining and the loss
// (SoftmaxCrossEntropy).
std::vector<OpType> default_black_list();
// Whether the default black list (O2, auto) takes the IR nodes an ONNX op
// of this type was composed of (ir::Node::origin): DFT and STFT (one GEMM
// with a DFT matrix: PyTorch autocast keeps fft_* in f32, and a long
// signal's DC bin passes f16's 65504) and AffineGrid (a GEMM that makes
// GridSample's coordinates, black for their precision), and a training
// step's synchronized BatchNorm ("SyncBatchNorm", train/sync_batch_norm.hpp:
// BatchNorm's ops). A custom black list replaces it.
bool black_listed_origin(std::string_view onnx_op);

// "Conv2d,MatMul" -> ops; throws std::invalid_argument naming an unknown op.
std::vector<OpType> parse_op_list(std::string_view text, std::string_view flag);

// Why a node got the precision it intends (the policy step).
enum class IntentReason {
  kLevelO0,           // O0: everything f32
  kWhiteList,         // on the white list (O1, auto)
  kNotWhiteListed,    // O1: not on the white list
  kBlackList,         // on the black list (O2, auto)
  kLevelDefault,      // O2: not black-listed / O3: everything
  kOverride,          // a per-node override
  kFollowsInput,      // auto, and data movement at O1-O3: follows its inputs' dtype
  kPromote,           // auto: widest input dtype
  kNotFloat,          // no floating-point data
  kExplicitCast,      // a Cast in the model: its target dtype is fixed
  kFollowsForward,    // a backward node: what its forward node (Node::grad_of) intends
  kMasterWeights,     // an optimizer update: f32 master weights at every level
  kOverflowFallback,  // AmpPolicy::overflow_fallback: it overflowed in 16-bit training
  kProbe,             // TensorStats: reads every tensor in the dtype it has
  kIntegerExact,      // Node::keep_f32: integer values computed in f32, exact only there
  kBatchStatistics,   // Node::keep_f32 of a synchronized BatchNorm's statistics (origin
                      // SyncBatchNorm)
};
// The policy step of the planner (docs/PLANNER.md, 1): what the level, the
// lists and the overrides intend for each float node, in topological
// order. The lists are resolved once per plan.
class PolicyStep {
 public:
  explicit PolicyStep(const AmpPolicy& policy);

  struct Intent {
    bool want16 = false;
    IntentReason reason = IntentReason::kLevelO0;
  };
  // Node `n` of `g` (a float node other than Cast; one graph per
  // PolicyStep, nodes in topological order); `home_dtype(v)` is the
  // dtype value v has in the plan so far, which `auto` and data movement
  // follow.
  Intent intend(const Graph& g, const Node& n, const std::function<DType(ValueId)>& home_dtype);
  // Throws std::invalid_argument naming the first override (or overflow
  // fallback) that matched no node of the graph called `graph_name`.
  void check_every_override_used(const std::string& graph_name) const;

 private:
  using OpSet = std::array<bool, kOpTypeCount>;
  const AmpPolicy& policy_;
  bool custom_white_, custom_black_;
  OpSet white_{}, black_{};
  std::vector<bool> override_used_;
  // The intents of the forward nodes a backward node names (Node::grad_of),
  // by name, for those backward nodes; none in a forward-only graph, so an
  // inference plan stores nothing per node. Keys view the graph's names,
  // collected on the first call; empty until their node is planned.
  std::unordered_map<std::string_view, std::optional<bool>> want16_by_node_;
  bool forward_names_collected_ = false;
  std::unordered_map<std::string, bool> fallback_;  // name -> used
};

}  // namespace ampx
