// libampx_nccl.so: the Module of nccl_module.hpp over NCCL and the CUDA
// runtime. Communicators are created non-blocking (ncclConfig_t::blocking
// = 0) so that every wait in here is a poll with a deadline: an
// initialisation that cannot finish (a peer that never comes, two ranks on
// one GPU) ends in one line, never in a hang.
#include <cuda_runtime.h>
#include <nccl.h>
#include <ampx/nccl/nccl_module.hpp>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "narrow_widen.hpp"

namespace ampx::nccl {
namespace {

using Clock = std::chrono::steady_clock;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e));
}

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string text = std::string(ncclGetErrorString(r));
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += ": " + std::string(last);
  return text;
}

ncclDataType_t nccl_type(WireType t) {
  switch (t) {
    case WireType::kF32:
      return ncclFloat32;
    case WireType::kF16:
      return ncclFloat16;
    case WireType::kBF16:
      return ncclBfloat16;
  }
  throw std::invalid_argument("unknown wire type");
}

// Sets the device for the calling thread and puts the previous one back.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
  }
  ~DeviceScope() { (void)cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

// Polls a non-blocking communicator until it leaves ncclInProgress.
void settle(ncclComm_t comm, Clock::time_point deadline, const char* what) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + nccl_text(r, comm));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress)
      throw std::runtime_error(std::string(what) + ": " + nccl_text(state, comm));
    if (Clock::now() > deadline)
      throw std::runtime_error(std::string(what) + ": not finished before the timeout");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

class CudaMarker final : public Marker {
 public:
  explicit CudaMarker(int ordinal) : ordinal_(ordinal) {
    DeviceScope d(ordinal_);
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CudaMarker() override {
    DeviceScope d(ordinal_);
    (void)cudaEventDestroy(event_);
  }
  CudaMarker(const CudaMarker&) = delete;
  CudaMarker& operator=(const CudaMarker&) = delete;
  void record(void* stream) override {
    DeviceScope d(ordinal_);
    check_cuda(cudaEventRecord(event_, static_cast<cudaStream_t>(stream)), "cudaEventRecord");
  }
  bool reached() override {
    DeviceScope d(ordinal_);
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) return false;
    check_cuda(e, "cudaEventQuery");
    return true;
  }

 private:
  int ordinal_;
  cudaEvent_t event_ = nullptr;
};

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t comm, int ordinal, int rank, int size)
      : comm_(comm), ordinal_(ordinal), rank_(rank), size_(size) {}
  ~NcclComm() override {
    if (aborted_) return;  // ncclCommAbort freed it already
    DeviceScope d(ordinal_);
    // A non-blocking communicator is finalized (polled, bounded) before it
    // is destroyed; one that does not finish in time is aborted instead.
    try {
      const ncclResult_t r = ncclCommFinalize(comm_);
      if (r != ncclSuccess && r != ncclInProgress) throw std::runtime_error(nccl_text(r, comm_));
      settle(comm_, Clock::now() + std::chrono::seconds(10), "ncclCommFinalize");
      (void)ncclCommDestroy(comm_);
    } catch (const std::exception&) {
      (void)ncclCommAbort(comm_);
    }
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(void* data, size_t count, WireType type, void* stream) override {
    DeviceScope d(ordinal_);
    const ncclResult_t r = ncclAllReduce(data, data, count, nccl_type(type), ncclSum, comm_,
                                         static_cast<cudaStream_t>(stream));
    if (r == ncclInProgress) {
      // Non-blocking: enqueueing may still be going on; it is quick.
      settle(comm_, Clock::now() + std::chrono::seconds(60), "ncclAllReduce");
      return;
    }
    if (r != ncclSuccess) throw std::runtime_error("ncclAllReduce: " + nccl_text(r, comm_));
  }
  void narrow(const float* src, void* dst, size_t count, WireType to, void* stream) override {
    DeviceScope d(ordinal_);
    check_cuda(
        launch_narrow(src, dst, count, to == WireType::kBF16, static_cast<cudaStream_t>(stream)),
        "f32 to 16-bit kernel");
  }
  void widen(const void* src, float* dst, size_t count, WireType from, void* stream) override {
    DeviceScope d(ordinal_);
    check_cuda(
        launch_widen(src, dst, count, from == WireType::kBF16, static_cast<cudaStream_t>(stream)),
        "16-bit to f32 kernel");
  }
  std::unique_ptr<Marker> marker() override { return std::make_unique<CudaMarker>(ordinal_); }
  std::string async_error() override {
    if (aborted_) return "the NCCL communicator was aborted";
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) return nccl_text(r, comm_);
    if (state == ncclSuccess || state == ncclInProgress) return {};
    return nccl_text(state, comm_);
  }
  void abort() noexcept override {
    if (aborted_) return;
    aborted_ = true;
    (void)cudaSetDevice(ordinal_);
    (void)ncclCommAbort(comm_);
  }

 private:
  ncclComm_t comm_;
  int ordinal_, rank_, size_;
  bool aborted_ = false;
};

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

// Waits for freshly created communicators; on failure aborts them all.
void finish_init(std::span<ncclComm_t> comms, InitOptions options, const std::string& what) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
  try {
    for (ncclComm_t c : comms) settle(c, deadline, what.c_str());
  } catch (...) {
    for (ncclComm_t c : comms)
      if (c != nullptr) (void)ncclCommAbort(c);
    throw;
  }
}

class NcclModule final : public Module {
 public:
  std::string version() const override {
    int nccl = 0, runtime = 0;
    (void)ncclGetVersion(&nccl);
    (void)cudaRuntimeGetVersion(&runtime);
    return "NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + "." +
           std::to_string(nccl % 100) + ", CUDA runtime " + std::to_string(runtime);
  }
  int device_count() override {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
  }
  UniqueId unique_id() override {
    ncclUniqueId id;
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) throw std::runtime_error("ncclGetUniqueId: " + nccl_text(r, nullptr));
    UniqueId out;
    static_assert(sizeof id == kUniqueIdBytes);
    std::memcpy(out.data(), &id, sizeof id);
    return out;
  }
  std::unique_ptr<Comm> init_rank(int ranks, int rank, const UniqueId& id, int ordinal,
                                  InitOptions options) override {
    DeviceScope d(ordinal);
    ncclUniqueId nid;
    std::memcpy(&nid, id.data(), sizeof nid);
    ncclConfig_t config = nonblocking_config();
    ncclComm_t comm = nullptr;
    const std::string what = "ncclCommInitRank (rank " + std::to_string(rank) + " of " +
                             std::to_string(ranks) + ", CUDA device " + std::to_string(ordinal) +
                             ")";
    const ncclResult_t r = ncclCommInitRankConfig(&comm, ranks, nid, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      if (comm != nullptr) (void)ncclCommAbort(comm);
      throw std::runtime_error(what + ": " + nccl_text(r, comm));
    }
    finish_init(std::span<ncclComm_t>(&comm, 1), options, what);
    return std::make_unique<NcclComm>(comm, ordinal, rank, ranks);
  }
  std::vector<std::unique_ptr<Comm>> init_all(std::span<const int> ordinals,
                                              InitOptions options) override {
    const int n = static_cast<int>(ordinals.size());
    const DeviceScope restore(ordinals.empty() ? 0 : ordinals[0]);  // the caller's device after
    const UniqueId id = unique_id();
    ncclUniqueId nid;
    std::memcpy(&nid, id.data(), sizeof nid);
    std::vector<ncclComm_t> comms(ordinals.size(), nullptr);
    std::string what = "ncclCommInitRank of " + std::to_string(n) + " ranks in one process";
    // One group: NCCL initialises the ranks together, as ncclCommInitAll.
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; i < n && r == ncclSuccess; ++i) {
      check_cuda(cudaSetDevice(ordinals[static_cast<size_t>(i)]), "cudaSetDevice");
      ncclConfig_t config = nonblocking_config();
      r = ncclCommInitRankConfig(&comms[static_cast<size_t>(i)], n, nid, i, &config);
    }
    const ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess) r = end;
    if (r != ncclSuccess && r != ncclInProgress) {
      for (ncclComm_t c : comms)
        if (c != nullptr) (void)ncclCommAbort(c);
      throw std::runtime_error(what + ": " + nccl_text(r, nullptr));
    }
    finish_init(comms, options, what);
    std::vector<std::unique_ptr<Comm>> out;
    for (int i = 0; i < n; ++i)
      out.push_back(std::make_unique<NcclComm>(comms[static_cast<size_t>(i)],
                                               ordinals[static_cast<size_t>(i)], i, n));
    return out;
  }
};

}  // namespace
}  // namespace ampx::nccl

extern "C" __attribute__((visibility("default"))) ampx::nccl::Module* ampx_nccl_module(
    int version) {
  static ampx::nccl::NcclModule module;
  return version == ampx::nccl::kNcclModuleVersion ? &module : nullptr;
}
