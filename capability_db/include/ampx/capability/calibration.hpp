// In-context calibration: node times measured in real runs of a plan (the
// executor's profiled runs, `ampx tune`), kept per device fingerprint and
// exact node signature, and the cost model that prefers them. TensorRT keeps
// a timing cache of its tactics for the same reason: a probe times an op
// alone at a few shapes, a real run times this node with its layouts,
// reorders, fused epilogue and launch overhead.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/capability/cost_model.hpp>

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ampx::capability {

// The key of a measurement: op, every tensor's dtype and shape, every
// attribute (sorted by name), never the node's name. Versioned: a row of
// another signature version is stale and dropped on load.
// "s1|Conv2d|f32[8,3,32,32],f32[64,3,3,3]|f32[8,64,32,32]|group=1;pads=[1,1,1,1]"
std::string node_signature(const ampx_node_desc& node);
inline constexpr const char* kSignatureVersion = "s1";

// One measured node signature on one device.
struct NodeTiming {
  std::string signature;
  std::string op;     // for listings; the signature holds it too
  std::string dtype;  // the first output's dtype
  int samples = 0;
  double median_us = 0;
  double spread_us = 0;     // half the interquartile range of the samples
  std::string measured_at;  // ISO 8601 UTC
};

// Why a stored row cannot be used ("" when it can): a signature of another
// version, no samples, a time that is not a finite number >= 0 (0 is
// valid: a node absorbed into its producer's kernel costs nothing; a "Run"
// row, a correction to the nodes' sum, may be negative).
std::string invalid_reason(const NodeTiming& t);

// A device's measurements by signature; a new measurement of a signature
// replaces the old one (the latest context wins).
class Calibration {
 public:
  Calibration() = default;
  // Rows from the store; invalid ones are dropped with one warning naming
  // how many and why (never fatal).
  explicit Calibration(std::vector<NodeTiming> rows, const std::string& device_id = {});

  // `samples_us`: the node's time in each profiled run (not empty).
  void record(const ampx_node_desc& node, std::span<const double> samples_us,
              const std::string& measured_at);
  // The cost of one run beyond its steps, for a model whose inputs and
  // outputs `run` describes (op "Run"); may be negative (see
  // CostModel::run_overhead_us).
  void record_run_overhead(const ampx_node_desc& run, std::span<const double> samples_us,
                           const std::string& measured_at);
  const NodeTiming* find(const std::string& signature) const;
  std::vector<NodeTiming> rows() const;
  size_t size() const { return rows_.size(); }

 private:
  void put(NodeTiming t);
  std::map<std::string, NodeTiming> rows_;
};

// Prefers an exact in-context measurement, then `inner` (probe
// interpolation, then plugin hints). The calibration can grow while the
// model is in use (the tuning loop records after each measured plan).
class CalibratedCostModel final : public CostModel {
 public:
  CalibratedCostModel(Calibration calibration, std::shared_ptr<CostModel> inner);

  double node_us(const ampx_node_desc& node) override { return estimate(node).us; }
  CostEstimate estimate(const ampx_node_desc& node) override;
  std::optional<double> run_overhead_us(const ampx_node_desc& run) override;
  std::string source() const override;
  bool measured() const override {
    return calibration_.size() > 0 || (inner_ && inner_->measured());
  }
  double copy_us(uint64_t bytes, bool to_device) override {
    return inner_ ? inner_->copy_us(bytes, to_device) : -1.0;
  }

  Calibration& calibration() { return calibration_; }
  const Calibration& calibration() const { return calibration_; }
  CostModel* inner() const { return inner_.get(); }

 private:
  Calibration calibration_;
  std::shared_ptr<CostModel> inner_;
  std::string signature_;  // reused per query
};

}  // namespace ampx::capability
