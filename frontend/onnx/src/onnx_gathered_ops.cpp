// Ops that move whole rows by per-batch amounts known at import (a
// constant, or a small graph input whose value the session binds), each
// imported as one Gather over a flattened view with the row indices
// computed here: ReverseSequence and TensorScatter (opset 24's KV-cache
// update). Any dtype, every backend; the index vector is one entry per row.
#include <fmt/format.h>

#include <numeric>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

ValueId reshape_to(Importer& im, ValueId v, const Shape& s) {
  return im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}});
}

ValueId gather_rows(Importer& im, ValueId rows, const std::vector<int64_t>& idx) {
  return im.emit1("Gather", {rows, im.constant_i64(idx, {static_cast<int64_t>(idx.size())})},
                  {{"axis", int64_t{0}}});
}

}  // namespace

// ReverseSequence (10+): for batch b, the first sequence_lens[b] steps
// along time_axis reversed, the rest kept. batch_axis and time_axis are 0
// and 1 in either order, so X viewed as [dim0 * dim1, rest] is gathered.
void reverse_sequence(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Shape xs = im.type(x).shape;
  if (xs.size() < 2) im.fail("input must have rank >= 2");
  const int64_t batch_axis = im.attr_int_or(n, "batch_axis", 1);
  const int64_t time_axis = im.attr_int_or(n, "time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    im.fail(fmt::format("batch_axis {} and time_axis {} must be 0 and 1 (in either order)",
                        batch_axis, time_axis));
  const int64_t batch = xs[static_cast<size_t>(batch_axis)];
  const int64_t time = xs[static_cast<size_t>(time_axis)];
  const auto lens = im.const_ints(n, 1, "sequence_lens");
  if (static_cast<int64_t>(lens.size()) != batch)
    im.fail(fmt::format("sequence_lens has {} values for a batch of {}", lens.size(), batch));
  for (int64_t l : lens)
    if (l < 0 || l > time)
      im.fail(fmt::format("sequence_lens value {} is outside [0, {}]", l, time));
  std::vector<int64_t> idx(static_cast<size_t>(batch * time));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < time; ++t) {
      const int64_t l = lens[static_cast<size_t>(b)];
      const int64_t src = t < l ? l - 1 - t : t;
      const auto flat = [&](int64_t tt) {
        return batch_axis == 0 ? b * time + tt : tt * batch + b;
      };
      idx[static_cast<size_t>(flat(t))] = flat(src);
    }
  Shape rows{batch * time};
  rows.insert(rows.end(), xs.begin() + 2, xs.end());
  im.bind(n, 0, reshape_to(im, gather_rows(im, reshape_to(im, x, rows), idx), xs));
}

// TensorScatter (24+): present = past_cache with, for each batch b, the
// update's rows written along `axis` from write_indices[b] (0 when absent);
// mode 'circular' wraps them modulo the cache's length, 'linear' must fit.
// The cache and the update are viewed with `axis` moved next to the batch
// ([B * S, rest] and [B * s, rest]), concatenated, and gathered.
void tensor_scatter(Importer& im, const onnx::NodeProto& n) {
  const ValueId past = im.input(n, 0);
  const ValueId update = im.input(n, 1);
  const Shape ps = im.type(past).shape, us = im.type(update).shape;
  const auto rank = static_cast<int64_t>(ps.size());
  if (rank < 2) im.fail("past_cache must have rank >= 2");
  if (im.type(update).dtype != im.type(past).dtype)
    im.fail("update and past_cache have different types");
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", -2), rank);
  if (axis == 0) im.fail("axis must not be the batch axis 0");
  if (us.size() != ps.size()) im.fail("update and past_cache have different ranks");
  for (size_t i = 0; i < ps.size(); ++i)
    if (static_cast<int64_t>(i) != axis && us[i] != ps[i])
      im.fail(fmt::format("update's dimension {} is {}, past_cache's {}", i, us[i], ps[i]));
  const std::string mode = im.attr_string_or(n, "mode", "linear");
  if (mode != "linear" && mode != "circular")
    im.fail("mode must be 'linear' or 'circular', got '" + mode + "'");
  const int64_t batch = ps[0], len = ps[static_cast<size_t>(axis)];
  const int64_t count = us[static_cast<size_t>(axis)];
  if (count > len) im.fail(fmt::format("update has {} rows for a cache of {}", count, len));
  std::vector<int64_t> at(static_cast<size_t>(batch), 0);
  if (im.has_input(n, 2)) {
    at = im.const_ints(n, 2, "write_indices");
    if (static_cast<int64_t>(at.size()) != batch)
      im.fail(fmt::format("write_indices has {} values for a batch of {}", at.size(), batch));
  }
  // Row j of batch b reads the update's row i where j is written, else its own.
  std::vector<int64_t> idx(static_cast<size_t>(batch * len));
  std::iota(idx.begin(), idx.end(), int64_t{0});
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t w = at[static_cast<size_t>(b)];
    if (w < 0 || w >= len || (mode == "linear" && w + count > len))
      im.fail(
          fmt::format("write_indices value {} with {} update rows does not fit the cache's {} "
                      "({} mode)",
                      w, count, len, mode));
    for (int64_t i = 0; i < count; ++i)
      idx[static_cast<size_t>(b * len + (w + i) % len)] = batch * len + b * count + i;
  }
  // Move `axis` next to the batch, flatten the two, gather, and move it back.
  std::vector<int64_t> perm{0, axis};
  for (int64_t a = 1; a < rank; ++a)
    if (a != axis) perm.push_back(a);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = int64_t(i);
  const auto rows = [&](ValueId v, int64_t length) {
    const ValueId t = im.emit1("Transpose", {v}, {{"perm", perm}});
    Shape s{batch * length};
    for (size_t i = 2; i < perm.size(); ++i) s.push_back(ps[static_cast<size_t>(perm[i])]);
    return reshape_to(im, t, s);
  };
  const ValueId both =
      im.emit1("Concat", {rows(past, len), rows(update, count)}, {{"axis", int64_t{0}}});
  Shape moved;
  for (int64_t a : perm) moved.push_back(ps[static_cast<size_t>(a)]);
  const ValueId y = reshape_to(im, gather_rows(im, both, idx), moved);
  im.bind(n, 0, im.emit1("Transpose", {y}, {{"perm", inverse}}));
}

}  // namespace ampx::onnx_io
