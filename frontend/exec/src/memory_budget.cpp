#include <ampx/exec/memory_budget.hpp>
#include <ampx/plugins/device.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

namespace ampx {

namespace {

// A number from a one-value file such as memory.max ("max" and unreadable
// files: nullopt).
std::optional<uint64_t> read_number(const char* path) {
  std::ifstream f(path);
  uint64_t v = 0;
  if (!(f >> v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib) {
    std::getline(f, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

std::string need_text(const DeviceMemoryNeed& n) {
  std::string s =
      fmt::format("arena {}, weights {}", bytes_text(n.arena_bytes), bytes_text(n.constant_bytes));
  if (n.state_bytes) s += fmt::format(", state {}", bytes_text(n.state_bytes));
  return s;
}

}  // namespace

std::string bytes_text(uint64_t bytes) {
  constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

uint64_t host_available_bytes() {
  std::optional<uint64_t> avail = mem_available();
  // cgroup v2: a container's limit, which /proc/meminfo does not show.
  if (const auto max = read_number("/sys/fs/cgroup/memory.max")) {
    const uint64_t used = read_number("/sys/fs/cgroup/memory.current").value_or(0);
    const uint64_t room = *max > used ? *max - used : 0;
    avail = avail ? std::min(*avail, room) : room;
  }
  return avail.value_or(0);
}

DeviceMemory device_memory(const plugins::Device& device) {
  const ampx_device_props& p = device.props();
  return {.id = device.id(),
          .pool = p.type == AMPX_DEVICE_CPU ? MemoryPool::kHost : MemoryPool::kDevice,
          .capacity_bytes = p.memory_bytes};
}

void check_memory(std::span<const DeviceMemoryNeed> needs, std::span<const DeviceMemory> devices,
                  const MemoryLimit& limit, uint64_t host_available) {
  uint64_t total = limit.host_bytes, host = limit.host_bytes;
  std::string all, on_host;
  for (size_t i = 0; i < needs.size() && i < devices.size(); ++i) {
    const DeviceMemoryNeed& n = needs[i];
    const DeviceMemory& d = devices[i];
    total += n.device_bytes() + n.staging_bytes;
    host += n.staging_bytes;
    all += fmt::format("{}{}: {}", all.empty() ? "" : ", ", d.id,
                       bytes_text(n.device_bytes() + n.staging_bytes));
    if (d.pool == MemoryPool::kHost) {
      host += n.device_bytes();
      on_host += fmt::format("{}{}: {}", on_host.empty() ? "" : "; ", d.id, need_text(n));
    } else if (n.staging_bytes) {
      on_host += fmt::format("{}{}'s copies: {}", on_host.empty() ? "" : "; ", d.id,
                             bytes_text(n.staging_bytes));
    }
  }
  if (limit.host_bytes) {
    all += fmt::format(", input and output tensors: {}", bytes_text(limit.host_bytes));
    on_host += fmt::format("{}input and output tensors: {}", on_host.empty() ? "" : "; ",
                           bytes_text(limit.host_bytes));
  }
  if (limit.max_bytes && total > limit.max_bytes)
    throw MemoryError(fmt::format("the plan needs {} in all ({}), more than {} allows ({})",
                                  bytes_text(total), all, limit.origin,
                                  bytes_text(limit.max_bytes)));
  for (size_t i = 0; i < needs.size() && i < devices.size(); ++i) {
    const DeviceMemory& d = devices[i];
    if (d.pool != MemoryPool::kDevice || d.capacity_bytes == 0) continue;
    if (needs[i].device_bytes() > d.capacity_bytes)
      throw MemoryError(fmt::format("the plan needs {} on {} ({}), more than its {} of memory",
                                    bytes_text(needs[i].device_bytes()), d.id, need_text(needs[i]),
                                    bytes_text(d.capacity_bytes)));
  }
  if (host_available && host > host_available)
    throw MemoryError(fmt::format(
        "the plan needs {} of host memory ({}), more than the {} this machine has available",
        bytes_text(host), on_host, bytes_text(host_available)));
}

void check_memory(std::span<const DeviceMemoryNeed> needs,
                  std::span<const plugins::Device* const> devices, const MemoryLimit& limit) {
  std::vector<DeviceMemory> mem;
  bool any_host = limit.host_bytes > 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    mem.push_back(device_memory(*devices[i]));
    any_host = any_host || mem.back().pool == MemoryPool::kHost ||
               (i < needs.size() && needs[i].staging_bytes > 0);
  }
  check_memory(needs, mem, limit, any_host ? host_available_bytes() : 0);
}

}  // namespace ampx
