// The Trainer's ZeRO-1 side (`--shard-optimizer`, docs/DISTRIBUTED.md,
// "Sharded optimizer"), its checkpoint writing, and reading state by name.
#include <ampx/session/trainer.hpp>
#include <ampx/train/checkpoint.hpp>

#include "trainer_program.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace ampx::train {
namespace {

bool is_moment(StateRole role) {
  return role == StateRole::kMomentum || role == StateRole::kAdamM || role == StateRole::kAdamV;
}

// The weight an optimizer moment belongs to ("fc1.w/adam_m" -> "fc1.w").
std::string moment_weight(const std::string& name) {
  return name.substr(0, name.rfind('/'));
}

}  // namespace

void Trainer::shard_weights() {
  // The unsharded step's weights in state order: the same on every rank.
  TrainingGraphOptions full = options_.graph;
  full.owned_weights.reset();
  const TrainingGraph tg = build_training_graph(with_batch_size(forward_, options_.batch), full);
  std::vector<std::string> names;
  std::vector<int64_t> elements;
  for (const StateEntry& e : tg.state) {
    if (e.role != StateRole::kWeight) continue;
    names.push_back(e.name);
    elements.push_back(element_count(e.initial.type.shape));
  }
  weight_owner_ = plan_weight_owners(elements, ranks());
  std::vector<std::string> owned;
  for (size_t k = 0; k < names.size(); ++k)
    if (weight_owner_[k] == rank()) owned.push_back(names[k]);
  options_.graph.owned_weights = std::move(owned);
}

std::vector<uint64_t> Trainer::all_gather_weights(const Program& p, std::span<const DType> wire,
                                                  std::vector<std::byte>& buffer) const {
  std::vector<size_t> weight_states;
  for (size_t i = 0; i < p.tg.state.size(); ++i)
    if (p.tg.state[i].role == StateRole::kWeight) weight_states.push_back(i);
  const auto wire_bytes = [&](size_t k) {
    const uint64_t f32 = p.tg.state[weight_states[k]].initial.data.size();
    return wire[k] == DType::kF32 ? f32 : f32 / 2;
  };
  std::vector<uint64_t> counts(static_cast<size_t>(ranks()), 0);
  for (size_t k = 0; k < weight_states.size(); ++k)
    counts[static_cast<size_t>(weight_owner_[k])] += wire_bytes(k);
  std::vector<uint64_t> next(counts.size());
  uint64_t total = 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    next[r] = total;
    total += counts[r];
  }
  std::vector<uint64_t> offset(weight_states.size());
  for (size_t k = weight_states.size(); k-- > 0;) {
    uint64_t& at = next[static_cast<size_t>(weight_owner_[k])];
    offset[k] = at;
    at += wire_bytes(k);
  }
  buffer.resize(total);
  for (size_t k = 0; k < weight_states.size(); ++k) {
    if (weight_owner_[k] != rank()) continue;
    const HostTensor master = p.read_state(weight_states[k]);  // owned: f32
    if (wire[k] == DType::kF32) {
      std::memcpy(buffer.data() + offset[k], master.data.data(), master.data.size());
    } else {
      const std::vector<std::byte> copy = copy_bytes(wire[k], master.data);
      std::memcpy(buffer.data() + offset[k], copy.data(), copy.size());
    }
  }
  options_.data_parallel->allgather(buffer, counts);
  return offset;
}

double Trainer::gather_weights(Program& p) {
  const auto t0 = std::chrono::steady_clock::now();
  // Each weight as the ranks that do not own it hold it: its 16-bit copy
  // where that is all its forward reads, else f32.
  const std::vector<uint64_t> offset = all_gather_weights(p, p.working, gathered_);
  for (size_t i = 0, k = 0; i < p.tg.state.size(); ++i) {
    if (p.tg.state[i].role != StateRole::kWeight) continue;
    if (weight_owner_[k] != rank()) {
      const uint64_t f32 = p.tg.state[i].initial.data.size();
      const uint64_t bytes = p.working[k] == DType::kF32 ? f32 : f32 / 2;
      p.write_state(i, std::span(gathered_).subspan(offset[k], bytes));
    }
    ++k;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<HostTensor> Trainer::gather_masters(const Program& p) const {
  const std::vector<DType> f32(p.working.size(), DType::kF32);
  std::vector<std::byte> buffer;
  const std::vector<uint64_t> offset = all_gather_weights(p, f32, buffer);
  std::vector<HostTensor> out;
  for (size_t i = 0, k = 0; i < p.tg.state.size(); ++i) {
    const StateEntry& e = p.tg.state[i];
    if (e.role != StateRole::kWeight) continue;
    HostTensor t{e.name, e.initial.type, std::vector<std::byte>(e.initial.data.size())};
    std::memcpy(t.data.data(), buffer.data() + offset[k++], t.data.size());
    out.push_back(std::move(t));
  }
  return out;
}

ShardedMemory Trainer::measure_sharding(const Program& p) const {
  ShardedMemory m{.rank = rank(), .ranks = ranks()};
  int moments_per_weight = 0;
  if (options_.graph.optimizer.kind != OptimizerKind::kSgd)
    moments_per_weight = 2;
  else if (options_.graph.optimizer.momentum > 0)
    moments_per_weight = 1;
  for (size_t i = 0, k = 0; i < p.tg.state.size(); ++i) {
    const StateEntry& e = p.tg.state[i];
    const uint64_t f32 = e.initial.data.size();
    const uint64_t held = p.held[i] == DType::kF32 ? f32 : f32 / 2;
    m.state_bytes += held;
    m.unsharded_state_bytes += f32;
    if (e.role == StateRole::kWeight) {
      ++m.weights;
      m.weight_bytes += f32;
      m.unsharded_optimizer_bytes += f32 * static_cast<uint64_t>(moments_per_weight);
      m.unsharded_state_bytes += f32 * static_cast<uint64_t>(moments_per_weight);
      if (weight_owner_[k++] == rank()) {
        ++m.owned_weights;
        m.owned_weight_bytes += f32;
      }
      if (p.held[i] == DType::kF32) {
        m.master_bytes += f32;
      } else {
        ++m.held_16bit;
        m.working_copy_bytes += held;
      }
    } else if (is_moment(e.role)) {
      m.optimizer_bytes += f32;
      m.unsharded_state_bytes -= f32;  // counted with its weight above
    }
  }
  return m;
}

std::filesystem::path Trainer::save_checkpoint(const std::filesystem::path& dir, int keep) {
  Checkpoint c = checkpoint();  // every rank: it reads the state
  if (!sharded()) return rank() == 0 ? train::save_checkpoint(dir, c, keep) : "";
  // The weights a rank owns and their moments go into its shard; the rest
  // (running statistics), the same on every rank, into rank 0's manifest.
  std::set<std::string> weights;
  for (const StateEntry& e : active_->tg.state)
    if (e.role == StateRole::kWeight) weights.insert(e.name);
  std::vector<std::string> mine(options_.graph.owned_weights->begin(),
                                options_.graph.owned_weights->end());
  Checkpoint shard = c, manifest = c;
  shard.state.clear();
  manifest.state.clear();
  for (HostTensor& t : c.state) {
    const bool weight = weights.contains(t.name);
    const std::string& of = weight ? t.name : moment_weight(t.name);
    const bool sharded_tensor = weight || weights.contains(of);
    if (!sharded_tensor)
      manifest.state.push_back(std::move(t));
    else if (std::find(mine.begin(), mine.end(), of) != mine.end())
      shard.state.push_back(std::move(t));
  }
  std::string error;
  try {
    make_checkpoint_dir(dir);
    write_checkpoint(dir / shard_file_name(c.epoch, rank(), ranks()), shard);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank learns whether every shard is on disk before the manifest
  // that names them is written.
  std::array<float, 1> failed{error.empty() ? 0.0f : 1.0f};
  options_.data_parallel->sum(failed);
  if (!error.empty()) throw std::runtime_error(error);
  if (failed[0] > 0)
    throw std::runtime_error(std::to_string(static_cast<int>(failed[0])) + " of " +
                             std::to_string(ranks()) +
                             " ranks could not write their checkpoint shard (their own lines say "
                             "why); no manifest was written");
  if (rank() != 0) return "";
  for (int r = 0; r < ranks(); ++r) manifest.shards.push_back(shard_file_name(c.epoch, r, ranks()));
  return train::save_checkpoint(dir, manifest, keep);
}

std::vector<HostTensor> Trainer::state_by_name(const std::vector<HostTensor>& tensors) const {
  std::map<std::string, const HostTensor*> by_name;
  for (const HostTensor& t : tensors) by_name.emplace(t.name, &t);
  std::set<std::string> weights;
  for (const StateEntry& e : active_->tg.state)
    if (e.role == StateRole::kWeight) weights.insert(e.name);
  std::vector<HostTensor> out;
  std::set<std::string> used;
  for (const StateEntry& e : active_->tg.state) {
    const auto it = by_name.find(e.name);
    if (it == by_name.end())
      throw std::invalid_argument("the checkpoint has no tensor '" + e.name + "' (" +
                                  std::string(state_role_name(e.role)) + ")");
    out.push_back(*it->second);
    used.insert(e.name);
  }
  for (const HostTensor& t : tensors)
    if (!used.contains(t.name) && !weights.contains(moment_weight(t.name)))
      throw std::invalid_argument("the checkpoint's tensor '" + t.name +
                                  "' is not state of this training step");
  return out;
}

}  // namespace ampx::train
