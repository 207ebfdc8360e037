// Runs one node on one device of a plugin through its bare C table: a
// buffer per tensor, prepare, launch, synchronize, copy back, every handle
// released on every path. The one implementation behind `ampx plugin-check`
// and every backend's conformance tests.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_check/host_tensor.hpp"

namespace ampx::check {

struct NodeRun {
  std::vector<Tensor> outputs;
  double us = -1;  // median of the timed launches (launch + synchronize), when timed
};

// Owns the plugin handles made through it, released in reverse (kernels,
// then buffers); throws "<call>: <message>" on a status.
class Handles {
 public:
  Handles(const ampx_plugin_api& api, ampx_plugin* plugin) : api_(api), plugin_(plugin) {}
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    for (ampx_kernel* k : kernels_) api_.kernel_destroy(k);
    for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) api_.buffer_free(*it);
  }
  void check(ampx_status* s, const char* call) const {
    if (!s) return;
    const char* m = api_.status_message(s);
    std::string msg = std::string(call) + ": " + (m ? std::string(m, strnlen(m, 1000)) : "");
    api_.status_destroy(s);
    std::replace(msg.begin(), msg.end(), '\n', ' ');  // one line
    throw std::runtime_error(msg);
  }
  ampx_buffer* alloc(int32_t device, uint64_t bytes) {
    ampx_buffer* b = nullptr;
    check(api_.buffer_alloc(plugin_, device, std::max<uint64_t>(bytes, 1), &b), "buffer_alloc");
    if (!b) throw std::runtime_error("buffer_alloc returned no buffer and no status");
    buffers_.push_back(b);
    return b;
  }
  ampx_kernel* prepare(int32_t device, const ampx_node_desc& node) {
    ampx_kernel* k = nullptr;
    check(api_.kernel_prepare(plugin_, device, &node, &k), "kernel_prepare");
    if (!k) throw std::runtime_error("kernel_prepare returned no kernel and no status");
    kernels_.push_back(k);
    return k;
  }

 private:
  const ampx_plugin_api& api_;
  ampx_plugin* plugin_;
  std::vector<ampx_buffer*> buffers_;
  std::vector<ampx_kernel*> kernels_;
};

// The median microseconds of `launches` calls of `launch` (each a launch
// and its synchronize).
template <class Launch>
double median_launch_us(int launches, Launch&& launch) {
  std::vector<double> us;
  for (int i = 0; i < launches; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// `timed_launches` > 0: after the first launch, that many more are timed and
// their median kept. Throws std::runtime_error naming the call that failed.
inline NodeRun run_node(const ampx_plugin_api& api, ampx_plugin* plugin, int32_t device,
                        const ampx_node_desc& node, const std::vector<Tensor>& inputs,
                        int timed_launches = 0) {
  Handles h(api, plugin);
  std::vector<ampx_buffer_view> in, out;
  for (const Tensor& t : inputs) {
    ampx_buffer* b = h.alloc(device, t.bytes.size());
    h.check(api.copy_to_device(b, 0, t.bytes.data(), t.bytes.size()), "copy_to_device");
    in.push_back({sizeof(ampx_buffer_view), b, 0});
  }
  NodeRun r;
  for (size_t i = 0; i < node.num_outputs; ++i) {
    const ampx_tensor_desc& o = node.outputs[i];
    r.outputs.push_back(Tensor::zeros(o.dtype, std::vector<int64_t>(o.dims, o.dims + o.rank)));
    out.push_back({sizeof(ampx_buffer_view), h.alloc(device, r.outputs.back().bytes.size()), 0});
  }
  ampx_kernel* k = h.prepare(device, node);
  auto launch = [&] {
    h.check(api.kernel_launch(k, in.data(), in.size(), out.data(), out.size()), "kernel_launch");
    h.check(api.synchronize(plugin, device), "synchronize");
  };
  launch();
  if (timed_launches > 0) r.us = median_launch_us(timed_launches, launch);
  for (size_t i = 0; i < r.outputs.size(); ++i)
    h.check(
        api.copy_to_host(r.outputs[i].bytes.data(), out[i].buffer, 0, r.outputs[i].bytes.size()),
        "copy_to_host");
  return r;
}

}  // namespace ampx::check
