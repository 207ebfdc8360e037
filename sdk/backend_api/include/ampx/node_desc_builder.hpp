// NodeDescBuilder: the one writer of the C ABI's node description
// (ampx_node_desc with its tensor and attribute arrays), header-only beside
// NodeView (plugin_support.hpp), which reads it. The frontend's IR and
// executor, the probe, the conformance kit and the tests all describe nodes
// through it, so every field is filled in one place (struct_size, counts,
// FLOATS attributes, const_data).
//
//   ampx::plugin_support::NodeDescBuilder b("Conv2d", "conv1");
//   b.input(AMPX_DTYPE_F32, {1, 3, 8, 8}).input(AMPX_DTYPE_F32, {4, 3, 3, 3})
//    .output(AMPX_DTYPE_F32, {1, 4, 6, 6}).attr_ints("strides", {1, 1});
//   const ampx_node_desc& d = b.desc();  // valid until the builder changes
//
// The builder owns the C arrays and, through the plain calls, a copy of
// everything passed. The `borrow_` calls instead point the description at
// the caller's memory, which must stay alive and unchanged while desc() is
// used: the planner describes every node of a graph, several times, and
// copying each node's shapes and attributes would cost it more than the
// description itself. reset() keeps the arrays' capacity, so describing
// node after node allocates nothing once the largest has been seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ampx/backend_api.h"

namespace ampx::plugin_support {

class NodeDescBuilder {
 public:
  NodeDescBuilder() { sync(); }
  explicit NodeDescBuilder(std::string op_type, std::string name = "node")
      : names_(std::make_unique<Names>(Names{std::move(op_type), std::move(name)})) {
    sync();
  }
  NodeDescBuilder(const NodeDescBuilder& o) { copy_from(o); }
  NodeDescBuilder& operator=(const NodeDescBuilder& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  // Moves keep every address (the owned data lives on the heap): the moved
  // description stays valid, the moved-from builder is empty.
  NodeDescBuilder(NodeDescBuilder&& o) noexcept { take(o); }
  NodeDescBuilder& operator=(NodeDescBuilder&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }
  ~NodeDescBuilder() = default;

  // ---- owned: the builder keeps a copy

  // `const_data`, when given, is borrowed (a test's or the kit's weights);
  // constant_input() gives the builder its own copy instead.
  NodeDescBuilder& input(ampx_dtype dt, std::vector<int64_t> dims,
                         const void* const_data = nullptr) {
    auto& owned = in_owned_.emplace_back(std::make_unique<OwnedTensor>());
    owned->dims = std::move(dims);
    in_.push_back(tensor(dt, owned->dims, const_data));
    return sync();
  }
  NodeDescBuilder& output(ampx_dtype dt, std::vector<int64_t> dims) {
    auto& owned = out_owned_.emplace_back(std::make_unique<OwnedTensor>());
    owned->dims = std::move(dims);
    out_.push_back(tensor(dt, owned->dims, nullptr));
    return sync();
  }
  // Makes input `index` a constant with these bytes (the whole tensor), as
  // the executor passes weights: a backend may pre-pack it at prepare.
  NodeDescBuilder& constant_input(size_t index, std::vector<std::byte> bytes) {
    auto& owned = in_owned_.at(index);
    if (!owned) owned = std::make_unique<OwnedTensor>();
    owned->bytes = std::move(bytes);
    in_.at(index).const_data = owned->bytes.empty() ? nullptr : owned->bytes.data();
    return *this;
  }
  NodeDescBuilder& attr_int(std::string name, int64_t v) {
    ampx_attr& a = add_attr(std::move(name), AMPX_ATTR_INT);
    a.i = v;
    return *this;
  }
  NodeDescBuilder& attr_float(std::string name, double v) {
    ampx_attr& a = add_attr(std::move(name), AMPX_ATTR_FLOAT);
    a.f = v;
    return *this;
  }
  NodeDescBuilder& attr_ints(std::string name, std::vector<int64_t> v) {
    ampx_attr& a = add_attr(std::move(name), AMPX_ATTR_INTS);
    OwnedAttr& owned = *attr_owned_.back();
    owned.ints = std::move(v);
    a.ints = owned.ints.data();
    a.count = owned.ints.size();
    return *this;
  }
  NodeDescBuilder& attr_floats(std::string name, std::vector<double> v) {
    ampx_attr& a = add_attr(std::move(name), AMPX_ATTR_FLOATS);
    OwnedAttr& owned = *attr_owned_.back();
    owned.floats = std::move(v);
    a.floats = owned.floats.data();
    a.count = owned.floats.size();
    return *this;
  }
  NodeDescBuilder& attr_str(std::string name, std::string v) {
    ampx_attr& a = add_attr(std::move(name), AMPX_ATTR_STRING);
    OwnedAttr& owned = *attr_owned_.back();
    owned.s = std::move(v);
    a.s = owned.s.c_str();
    return *this;
  }

  // ---- borrowed: the caller keeps what is passed alive and unchanged

  // Starts another node: drops every input, output and attribute (keeping
  // the arrays' capacity) and borrows the op type and name (NUL-terminated).
  NodeDescBuilder& reset(const char* op_type, const char* name) {
    names_.reset();
    in_.clear();
    out_.clear();
    attrs_.clear();
    in_owned_.clear();
    out_owned_.clear();
    attr_owned_.clear();
    borrowed_op_ = op_type;
    borrowed_name_ = name;
    return sync();
  }
  NodeDescBuilder& borrow_input(ampx_dtype dt, std::span<const int64_t> dims,
                                const void* const_data) {
    in_owned_.emplace_back();
    in_.push_back(tensor(dt, dims, const_data));
    return sync();
  }
  NodeDescBuilder& borrow_output(ampx_dtype dt, std::span<const int64_t> dims) {
    out_owned_.emplace_back();
    out_.push_back(tensor(dt, dims, nullptr));
    return sync();
  }
  // An attribute with a borrowed name (and array or string); one overload
  // per kind, on exact types.
  NodeDescBuilder& borrow_attr(const char* name, int64_t v) {
    borrow_attr_entry(name, AMPX_ATTR_INT).i = v;
    return *this;
  }
  NodeDescBuilder& borrow_attr(const char* name, double v) {
    borrow_attr_entry(name, AMPX_ATTR_FLOAT).f = v;
    return *this;
  }
  NodeDescBuilder& borrow_attr(const char* name, std::span<const int64_t> v) {
    ampx_attr& a = borrow_attr_entry(name, AMPX_ATTR_INTS);
    a.ints = v.data();
    a.count = v.size();
    return *this;
  }
  NodeDescBuilder& borrow_attr(const char* name, std::span<const double> v) {
    ampx_attr& a = borrow_attr_entry(name, AMPX_ATTR_FLOATS);
    a.floats = v.data();
    a.count = v.size();
    return *this;
  }
  NodeDescBuilder& borrow_attr(const char* name, const char* v) {
    borrow_attr_entry(name, AMPX_ATTR_STRING).s = v;
    return *this;
  }
  // Points input `index` at constant bytes the caller keeps (the executor's
  // weights computed at load).
  NodeDescBuilder& borrow_constant(size_t index, const void* bytes) {
    in_.at(index).const_data = bytes;
    return *this;
  }

  // ---- the description

  const ampx_node_desc& desc() const noexcept { return node_; }
  std::string op_type() const { return node_.op_type; }
  std::string name() const { return node_.name; }

 private:
  struct Names {
    std::string op, name;
  };
  struct OwnedTensor {
    std::vector<int64_t> dims;
    std::vector<std::byte> bytes;
  };
  struct OwnedAttr {
    std::string name;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::string s;
  };

  static ampx_tensor_desc tensor(ampx_dtype dt, std::span<const int64_t> dims,
                                 const void* const_data) {
    ampx_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = dt;
    d.rank = static_cast<int32_t>(dims.size());
    d.dims = dims.data();
    d.const_data = const_data;
    return d;
  }
  static ampx_attr attr(const char* name, ampx_attr_kind kind) {
    ampx_attr a{};
    a.struct_size = sizeof a;
    a.name = name;
    a.kind = kind;
    return a;
  }
  ampx_attr& add_attr(std::string name, ampx_attr_kind kind) {
    auto& owned = attr_owned_.emplace_back(std::make_unique<OwnedAttr>());
    owned->name = std::move(name);
    attrs_.push_back(attr(owned->name.c_str(), kind));
    sync();
    return attrs_.back();
  }
  ampx_attr& borrow_attr_entry(const char* name, ampx_attr_kind kind) {
    attr_owned_.emplace_back();
    attrs_.push_back(attr(name, kind));
    sync();
    return attrs_.back();
  }
  // Points the node at the arrays (after any change to their size).
  NodeDescBuilder& sync() noexcept {
    node_ = {};
    node_.struct_size = sizeof node_;
    node_.op_type = names_ ? names_->op.c_str() : borrowed_op_;
    node_.name = names_ ? names_->name.c_str() : borrowed_name_;
    node_.num_inputs = in_.size();
    node_.inputs = in_.data();
    node_.num_outputs = out_.size();
    node_.outputs = out_.data();
    node_.num_attrs = attrs_.size();
    node_.attrs = attrs_.data();
    return *this;
  }

  // A copy points at its own copies of the owned data and at the same
  // borrowed memory.
  static void copy_tensors(std::vector<ampx_tensor_desc>& to,
                           std::vector<std::unique_ptr<OwnedTensor>>& to_owned,
                           const std::vector<ampx_tensor_desc>& from,
                           const std::vector<std::unique_ptr<OwnedTensor>>& from_owned) {
    to = from;
    to_owned.clear();
    for (size_t i = 0; i < from.size(); ++i) {
      const OwnedTensor* src = from_owned[i].get();
      auto& dst = to_owned.emplace_back(src ? std::make_unique<OwnedTensor>(*src) : nullptr);
      if (!src) continue;
      if (from[i].dims == src->dims.data()) to[i].dims = dst->dims.data();
      if (!src->bytes.empty() && from[i].const_data == src->bytes.data())
        to[i].const_data = dst->bytes.data();
    }
  }
  void copy_from(const NodeDescBuilder& o) {
    names_ = o.names_ ? std::make_unique<Names>(*o.names_) : nullptr;
    borrowed_op_ = o.borrowed_op_;
    borrowed_name_ = o.borrowed_name_;
    copy_tensors(in_, in_owned_, o.in_, o.in_owned_);
    copy_tensors(out_, out_owned_, o.out_, o.out_owned_);
    attrs_ = o.attrs_;
    attr_owned_.clear();
    for (size_t i = 0; i < o.attrs_.size(); ++i) {
      const OwnedAttr* src = o.attr_owned_[i].get();
      auto& dst = attr_owned_.emplace_back(src ? std::make_unique<OwnedAttr>(*src) : nullptr);
      if (!src) continue;
      ampx_attr& a = attrs_[i];
      a.name = dst->name.c_str();
      if (a.kind == AMPX_ATTR_INTS) a.ints = dst->ints.data();
      if (a.kind == AMPX_ATTR_FLOATS) a.floats = dst->floats.data();
      if (a.kind == AMPX_ATTR_STRING) a.s = dst->s.c_str();
    }
    sync();
  }
  void take(NodeDescBuilder& o) noexcept {
    names_ = std::move(o.names_);
    borrowed_op_ = std::exchange(o.borrowed_op_, "");
    borrowed_name_ = std::exchange(o.borrowed_name_, "");
    in_ = std::move(o.in_);
    out_ = std::move(o.out_);
    attrs_ = std::move(o.attrs_);
    in_owned_ = std::move(o.in_owned_);
    out_owned_ = std::move(o.out_owned_);
    attr_owned_ = std::move(o.attr_owned_);
    o.in_.clear();
    o.out_.clear();
    o.attrs_.clear();
    o.in_owned_.clear();
    o.out_owned_.clear();
    o.attr_owned_.clear();
    sync();
    o.sync();
  }

  // The op type and name, owned (names_) or borrowed.
  std::unique_ptr<Names> names_;
  const char* borrowed_op_ = "";
  const char* borrowed_name_ = "";
  // The C entries, and per entry what the builder owns of it (null when
  // every pointer in the entry is borrowed). Owned data sits on the heap,
  // behind unique_ptr, so the entries' pointers survive growth and moves.
  std::vector<ampx_tensor_desc> in_, out_;
  std::vector<ampx_attr> attrs_;
  std::vector<std::unique_ptr<OwnedTensor>> in_owned_, out_owned_;
  std::vector<std::unique_ptr<OwnedAttr>> attr_owned_;
  ampx_node_desc node_{};
};

}  // namespace ampx::plugin_support
