// Training checkpoints (docs/TRAINING.md, "Checkpoints"): the f32 master
// weights, running statistics and optimizer state, the epoch and step, the
// seed (which fixes the data order and dropout masks of every later step),
// and the options the run was planned with. The file is safetensors'
// layout, readable with NumPy alone: an 8-byte little-endian header length,
// a JSON header (per tensor: dtype, shape, data_offsets; "__metadata__":
// strings, among them "crc32", every tensor's CRC-32 as zlib and Python's
// zlib.crc32 compute it), then the raw little-endian tensors. Written atomically (a
// temporary file, fsync, rename); the last `keep` are kept.
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/train/fallback_record.hpp>
#include <ampx/train/loss_scale.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ampx::train {

// Version 2 added the tensors' CRC-32s (metadata "crc32"); a version 1
// file is refused, saying so.
inline constexpr const char* kCheckpointFormat = "ampx.checkpoint/2";

struct Checkpoint {
  std::vector<HostTensor> state;  // in the training step's state order
  int epoch = 0;                  // epochs finished
  int64_t step = 0;               // steps finished
  uint64_t seed = 0;
  std::string model;  // model_fingerprint() of the forward graph
  // The run's options as JSON text (optimizer, amp level, batch, ...):
  // a resume must use the same ones.
  std::string options;
  // The loss-scale schedule (LossScaleOptions::str()) and where it stood.
  // A checkpoint written before loss scaling existed reads as "none".
  std::string loss_scale_schedule = "none";
  LossScaleState loss_scale;
  // Layers the automatic FP32 fallback moved to f32, in order.
  std::vector<FallbackRecord> fallbacks;
  // And what their windows held (metadata "fallback_windows").
  std::vector<FallbackWindow> fallback_windows;
  // A sharded checkpoint's manifest (ZeRO-1, docs/DISTRIBUTED.md): the shard
  // files, in its directory, that hold the rest of the state (metadata
  // "shards"). Empty for a whole checkpoint and for a shard.
  std::vector<std::string> shards;
};

// Names, dtypes and shapes of the forward graph's inputs, outputs and
// constants, hashed: a checkpoint from another model does not match.
std::string model_fingerprint(const Graph& forward);

// Creates `dir` (and its parents) for checkpoints, or throws a one-line
// fileio::FileError naming it: a dangling symbolic link, a file that is not
// a directory, no permission. `ampx train` calls it before the first epoch.
void make_checkpoint_dir(const std::filesystem::path& dir);

// "<dir>/epoch-0003.ampxckpt"; creates `dir` (make_checkpoint_dir()); removes all but the `keep`
// newest (keep >= 1). Returns the file written.
std::filesystem::path save_checkpoint(const std::filesystem::path& dir, const Checkpoint& c,
                                      int keep = 3);
void write_checkpoint(const std::filesystem::path& file, const Checkpoint& c);
// Throws std::runtime_error "FILE: <what is wrong>" for a truncated,
// corrupt or foreign file: a tensor whose data does not match its CRC-32,
// or a float tensor holding NaN or infinity (named). write_checkpoint()
// refuses such a tensor too, writing nothing. A manifest's shards are read
// too (each must be of the same model, options, seed, epoch and step, and
// name no tensor twice): `state` is then the manifest's tensors followed by
// each shard's.
Checkpoint read_checkpoint(const std::filesystem::path& file);

// ZeRO-1's sharded checkpoints: rank `rank` of `ranks` writes its tensors
// (the master weights it owns and their optimizer moments) into
// "<dir>/epoch-0003.shard-1-of-2.ampxckpt" with write_checkpoint(); once
// every rank has, rank 0 writes the manifest with save_checkpoint(), the
// rest of the state and `shards` naming them all. A manifest on disk thus
// means a complete checkpoint; latest_checkpoint() sees manifests only, and
// save_checkpoint() removes an old manifest's shards with it.
std::string shard_file_name(int epoch, int rank, int ranks);
// The newest checkpoint in `dir`; nullopt when there is none.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& dir);

}  // namespace ampx::train
