// The NCCL module (libampx_nccl.so): NCCL and the CUDA runtime behind an
// interface that names neither, so that ampx itself links no CUDA library.
// The host loads it with load_nccl_module() (nccl_loader.hpp) when a
// data-parallel run's gradients live on one CUDA device whose plugin hands
// out native handles (backend_api.h, ABI 1.6); where it or libnccl.so.2
// cannot be loaded, or no CUDA device answers, the run takes the host path.
//
// Module and host are built together (one compiler, one libstdc++): the
// interface is C++, exceptions cross it (std::runtime_error, one line), and
// kNcclModuleVersion guards against a module of another build.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ampx::nccl {

inline constexpr int kNcclModuleVersion = 1;
inline constexpr size_t kUniqueIdBytes = 128;  // sizeof(ncclUniqueId)
using UniqueId = std::array<std::byte, kUniqueIdBytes>;

// What a bucket travels as: f32, or 16 bits on the wire (NCCL sums 16-bit
// values in 16 bits, rounding at each hop, as the MPI path's operator).
enum class WireType { kF32, kF16, kBF16 };

// A point in a stream's order (a CUDA event): reached() once everything
// enqueued before record() has run.
class Marker {
 public:
  virtual ~Marker() = default;
  virtual void record(void* stream) = 0;
  virtual bool reached() = 0;  // throws on a CUDA error
};

// One rank's NCCL communicator on one CUDA device. Every call enqueues on
// `stream` (a cudaStream_t of the communicator's device) and returns.
class Comm {
 public:
  virtual ~Comm() = default;  // ncclCommDestroy (after abort(): frees only)
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: data holds `count` elements of `type` on the device.
  virtual void allreduce_sum(void* data, size_t count, WireType type, void* stream) = 0;
  // f32 -> 16-bit (round to nearest even) and back, `count` elements.
  virtual void narrow(const float* src, void* dst, size_t count, WireType to, void* stream) = 0;
  virtual void widen(const void* src, float* dst, size_t count, WireType from, void* stream) = 0;
  virtual std::unique_ptr<Marker> marker() = 0;
  // Empty while the communicator is healthy; else NCCL's error
  // (ncclCommGetAsyncError, with ncclGetLastError's text).
  virtual std::string async_error() = 0;
  // ncclCommAbort: NCCL's kernels on the stream stop, the communicator is
  // dead. Safe to call more than once.
  virtual void abort() noexcept = 0;
};

// How long a collective initialisation may take before it is abandoned.
struct InitOptions {
  int timeout_ms = 60000;
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string version() const = 0;  // "NCCL 2.27.7, CUDA runtime 13000"
  virtual int device_count() = 0;           // CUDA devices visible; 0 without any
  virtual UniqueId unique_id() = 0;         // ncclGetUniqueId (rank 0 of a job)
  // ncclCommInitRankConfig (non-blocking, polled): this process's rank of
  // `ranks`, on CUDA device `ordinal`. Throws one line on an NCCL error
  // (two ranks on one GPU: ncclInvalidUsage) or after options.timeout_ms.
  virtual std::unique_ptr<Comm> init_rank(int ranks, int rank, const UniqueId& id, int ordinal,
                                          InitOptions options) = 0;
  // All ranks in this process, rank i on ordinals[i] (ncclCommInitAll's
  // job, non-blocking and bounded as init_rank): tests without MPI.
  virtual std::vector<std::unique_ptr<Comm>> init_all(std::span<const int> ordinals,
                                                      InitOptions options) = 0;
};

}  // namespace ampx::nccl

// The module's one export: a Module of kNcclModuleVersion, or NULL when
// `version` is another (the module belongs to another build).
extern "C" ampx::nccl::Module* ampx_nccl_module(int version);
