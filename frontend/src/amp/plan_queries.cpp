#include "plan_queries.hpp"

#include <cstring>

namespace ampx::planner_detail {

CapabilitySource::Answer MemoizedQuery::operator()(const ampx_node_desc& d) {
  key_.clear();
  append(d.op_type, std::strlen(d.op_type) + 1);
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
  if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
  auto answer = source_.query(d);
  cache_.emplace(key_, answer);
  return answer;
}

}  // namespace ampx::planner_detail
