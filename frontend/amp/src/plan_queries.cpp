#include "plan_queries.hpp"

#include <cstring>

namespace ampx::planner_detail {

void signature_key(const ampx_node_desc& d, std::string& key) {
  // Sized first and written once: called several times per node of a plan.
  auto tensors_size = [](const ampx_tensor_desc* t, size_t n) {
    size_t bytes = sizeof n;
    for (size_t i = 0; i < n; ++i)
      bytes +=
          sizeof t[i].dtype + sizeof t[i].rank + sizeof(int64_t) * static_cast<size_t>(t[i].rank);
    return bytes;
  };
  const size_t op_len = std::strlen(d.op_type) + 1;
  size_t size =
      op_len + tensors_size(d.inputs, d.num_inputs) + tensors_size(d.outputs, d.num_outputs);
  for (size_t i = 0; i < d.num_attrs; ++i) {
    const ampx_attr& a = d.attrs[i];
    size += std::strlen(a.name) + 1 + sizeof a.kind + sizeof a.i + sizeof a.f + sizeof a.count;
    if (a.kind == AMPX_ATTR_INTS) size += sizeof(int64_t) * a.count;
    if (a.kind == AMPX_ATTR_FLOATS) size += sizeof(double) * a.count;
    if (a.kind == AMPX_ATTR_STRING) size += std::strlen(a.s) + 1;
  }
  key.resize(size);
  char* out = key.data();
  auto append = [&](const void* p, size_t n) {
    if (n) std::memcpy(out, p, n);
    out += n;
  };
  append(d.op_type, op_len);
  auto tensors = [&](const ampx_tensor_desc* t, size_t n) {
    append(&n, sizeof n);
    for (size_t i = 0; i < n; ++i) {
      append(&t[i].dtype, sizeof t[i].dtype);
      append(&t[i].rank, sizeof t[i].rank);
      append(t[i].dims, sizeof(int64_t) * static_cast<size_t>(t[i].rank));
    }
  };
  tensors(d.inputs, d.num_inputs);
  tensors(d.outputs, d.num_outputs);
  for (size_t i = 0; i < d.num_attrs; ++i) {
    const ampx_attr& a = d.attrs[i];
    append(a.name, std::strlen(a.name) + 1);
    append(&a.kind, sizeof a.kind);
    append(&a.i, sizeof a.i);
    append(&a.f, sizeof a.f);
    append(&a.count, sizeof a.count);
    if (a.kind == AMPX_ATTR_INTS) append(a.ints, sizeof(int64_t) * a.count);
    if (a.kind == AMPX_ATTR_FLOATS) append(a.floats, sizeof(double) * a.count);
    if (a.kind == AMPX_ATTR_STRING) append(a.s, std::strlen(a.s) + 1);
  }
}

CapabilitySource::Answer MemoizedQuery::operator()(const ampx_node_desc& d) {
  signature_key(d, key_);
  if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
  auto answer = source_.query(d);
  cache_.emplace(key_, answer);
  return answer;
}

MemoizedCost::Entry& MemoizedCost::entry(const ampx_node_desc& node) {
  signature_key(node, key_);
  if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
  return cache_.emplace(key_, Entry{}).first->second;
}

double MemoizedCost::node_us(const ampx_node_desc& node) {
  Entry& e = entry(node);
  if (!e.us) e.us = inner_.node_us(node);
  return *e.us;
}

capability::CostEstimate MemoizedCost::estimate(const ampx_node_desc& node) {
  Entry& e = entry(node);
  if (!e.estimate) e.estimate = inner_.estimate(node);
  return *e.estimate;
}

}  // namespace ampx::planner_detail
