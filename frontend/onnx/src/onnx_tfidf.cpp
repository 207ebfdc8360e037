// TfIdfVectorizer (9+) over integer n-grams, composed at import: the pool
// is an attribute, so every n-gram is a constant. For each n-gram length n
// and skip distance d, the windows X[..., p + j*d] (one Slice per j) are
// compared with the j-th element of every pool n-gram of that length at
// once (Equal broadcast to [B, L, K_n]), And-ed over j and counted over p
// (ReduceSum); a constant one-hot MatMul scatters the counts to
// `ngram_indexes`, and the mode weights them. ONNX's reference (and ONNX
// Runtime) count every (start, skip) occurrence of an n-gram of length >= 2
// for skip distances 1..max_skip_count+1, and unigrams once; a pool n-gram
// given twice keeps its last id (the reference's trie overwrites it).
// String pools are refused: ampx has no string type.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {

namespace {

// The bound on the IR nodes one TfIdfVectorizer may emit (a pool's n-gram
// lengths times its skip distances times the Slices per window).
constexpr int64_t kMaxTfIdfNodes = 4096;

struct TfIdfAttrs {
  int64_t min_n = 0, max_n = 0, max_skip = 0;
  std::string mode;
  std::vector<int64_t> counts, indexes, pool;
  std::vector<float> weights;
};

TfIdfAttrs read_attrs(Importer& im, const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "pool_strings")
      im.fail("pool_strings (string n-grams) is not supported: ampx has no string type");
  TfIdfAttrs t;
  const auto need_int = [&](const char* name) {
    const auto v = im.attr_int(n, name);
    if (!v) im.fail(fmt::format("attribute '{}' is required", name));
    return *v;
  };
  t.min_n = need_int("min_gram_length");
  t.max_n = need_int("max_gram_length");
  t.max_skip = need_int("max_skip_count");
  t.mode = im.attr_string_or(n, "mode", "");
  if (t.mode != "TF" && t.mode != "IDF" && t.mode != "TFIDF")
    im.fail(fmt::format("mode must be TF, IDF or TFIDF, got '{}'", t.mode));
  if (t.min_n < 1 || t.max_n < t.min_n)
    im.fail(
        fmt::format("gram lengths must satisfy 1 <= min_gram_length <= max_gram_length, got "
                    "{} and {}",
                    t.min_n, t.max_n));
  if (t.max_skip < 0) im.fail(fmt::format("max_skip_count must be >= 0, got {}", t.max_skip));
  t.pool = im.attr_ints(n, "pool_int64s").value_or(std::vector<int64_t>{});
  if (t.pool.empty()) im.fail("attribute 'pool_int64s' is required (and must not be empty)");
  t.counts = im.attr_ints(n, "ngram_counts").value_or(std::vector<int64_t>{});
  t.indexes = im.attr_ints(n, "ngram_indexes").value_or(std::vector<int64_t>{});
  t.weights = im.attr_floats(n, "weights").value_or(std::vector<float>{});
  if (t.counts.empty() || t.indexes.empty())
    im.fail("attributes 'ngram_counts' and 'ngram_indexes' are required");
  const auto pool_size = static_cast<int64_t>(t.pool.size());
  for (size_t i = 0; i < t.counts.size(); ++i)
    if (t.counts[i] < 0 || t.counts[i] > pool_size || (i > 0 && t.counts[i] < t.counts[i - 1]))
      im.fail(
          fmt::format("ngram_counts must be non-decreasing offsets into the pool (size {}), "
                      "got {} at {}",
                      pool_size, t.counts[i], i));
  for (int64_t k : t.indexes)
    if (k < 0 || k >= (int64_t{1} << 31))
      im.fail(fmt::format("ngram_indexes must be in [0, 2^31), got {}", k));
  return t;
}

// One pool n-gram that can be counted: its values and its output column.
struct Gram {
  std::vector<int64_t> values;
  int64_t column = 0;
};

// The n-grams of lengths min..max by length, each once with its last id
// (ids count every pool n-gram from 1, in the pool's order).
std::map<int64_t, std::vector<Gram>> pool_grams(Importer& im, const TfIdfAttrs& t) {
  std::map<std::vector<int64_t>, int64_t> last_id;
  int64_t id = 0;
  for (size_t i = 0; i < t.counts.size(); ++i) {
    const auto size = static_cast<int64_t>(i) + 1;
    const int64_t begin = t.counts[i];
    const int64_t end = i + 1 < t.counts.size() ? t.counts[i + 1] : int64_t(t.pool.size());
    const int64_t grams = (end - begin) / size;
    for (int64_t g = 0; g < grams; ++g, ++id) {
      if (size < t.min_n || size > t.max_n) continue;
      const auto* first = t.pool.data() + begin + g * size;
      last_id[std::vector<int64_t>(first, first + size)] = id;
    }
  }
  std::map<int64_t, std::vector<Gram>> out;
  for (const auto& [values, gid] : last_id) {
    if (gid >= static_cast<int64_t>(t.indexes.size()))
      im.fail(fmt::format("ngram_indexes has {} entries, the pool's n-gram {} needs one",
                          t.indexes.size(), gid + 1));
    out[static_cast<int64_t>(values.size())].push_back({values, t.indexes[size_t(gid)]});
  }
  return out;
}

ValueId f32_constant(Importer& im, const std::vector<float>& v, Shape shape) {
  std::vector<std::byte> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return im.constant({DType::kF32, std::move(shape)}, std::move(bytes));
}

// Element j of every gram, in X's dtype, shape [K].
ValueId gram_column(Importer& im, const std::vector<Gram>& grams, size_t j, DType dtype) {
  const auto k = static_cast<int64_t>(grams.size());
  if (dtype == DType::kI64) {
    std::vector<int64_t> v;
    for (const auto& g : grams) v.push_back(g.values[j]);
    return im.constant_i64(v, {k});
  }
  std::vector<std::byte> bytes(grams.size() * sizeof(int32_t));
  for (size_t i = 0; i < grams.size(); ++i) {
    const auto v = static_cast<int32_t>(grams[i].values[j]);  // fits: checked by the caller
    std::memcpy(bytes.data() + i * sizeof(int32_t), &v, sizeof v);
  }
  return im.constant({DType::kI32, {k}}, std::move(bytes));
}

// The count of each gram of length n over every skip distance that fits:
// [B, K_n] f32.
ValueId count_grams(Importer& im, ValueId x, int64_t b, int64_t c, int64_t n,
                    const std::vector<Gram>& grams, int64_t max_skip) {
  const DType dtype = im.type(x).dtype;
  const auto k = static_cast<int64_t>(grams.size());
  std::vector<ValueId> columns;
  for (size_t j = 0; j < size_t(n); ++j) columns.push_back(gram_column(im, grams, j, dtype));
  ValueId total = kNone;
  // Skip distances past C fit no window (and max_skip + 1 may overflow).
  const int64_t skips = n == 1 ? 1 : std::min(max_skip, c) + 1;
  for (int64_t d = 1; d <= skips; ++d) {
    const int64_t len = c - d * (n - 1);
    if (len < 1) break;
    im.check_size({DType::kBool, {b, len, k}}, "the n-gram match");
    ValueId match = kNone;
    for (int64_t j = 0; j < n; ++j) {
      const ValueId w = im.emit1("Slice", {x},
                                 {{"starts", std::vector<int64_t>{j * d}},
                                  {"ends", std::vector<int64_t>{j * d + len}},
                                  {"axes", std::vector<int64_t>{1}}});
      const ValueId col = im.emit1("Reshape", {w}, {{"shape", std::vector<int64_t>{b, len, 1}}});
      const ValueId eq = im.emit1("Equal", {col, columns[size_t(j)]});
      match = match == kNone ? eq : im.emit1("And", {match, eq});
    }
    const ValueId as_f32 = im.emit1("Cast", {match}, {{"to", int64_t(to_c(DType::kF32))}});
    const ValueId count = im.emit1("ReduceSum", {as_f32},
                                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
    total = total == kNone ? count : im.emit1("Add", {total, count});
  }
  return total;
}

}  // namespace

void tfidf_vectorizer(Importer& im, const onnx::NodeProto& n) {
  const TfIdfAttrs t = read_attrs(im, n);
  ValueId x = im.input(n, 0);
  const TensorType xt = im.type(x);
  if (xt.dtype != DType::kI32 && xt.dtype != DType::kI64)
    im.fail(fmt::format("X must be int32 or int64 (string inputs are not supported), got {}",
                        dtype_name(xt.dtype)));
  if (xt.shape.size() != 1 && xt.shape.size() != 2)
    im.fail(fmt::format("X must be [C] or [B, C], got shape {}", shape_str(xt.shape)));
  const bool batched = xt.shape.size() == 2;
  const int64_t b = batched ? xt.shape[0] : 1, c = xt.shape.back();
  if (batched && b < 1)
    im.fail(fmt::format("X's batch B must be >= 1, got shape {}", shape_str(xt.shape)));
  int64_t out_size = 0;
  for (int64_t k : t.indexes) out_size = std::max(out_size, k + 1);
  if (t.mode != "TF" && !t.weights.empty() && static_cast<int64_t>(t.weights.size()) < out_size)
    im.fail(fmt::format("weights has {} entries, the output has {} columns", t.weights.size(),
                        out_size));
  const Shape out_shape = batched ? Shape{b, out_size} : Shape{out_size};
  im.check_size({DType::kF32, {b, out_size}}, "the output");

  im.set_keep_f32();  // integer counts and ONNX's f32 weights, kept exact
  auto grams = pool_grams(im, t);
  int64_t nodes = 0;
  for (auto& [len, list] : grams) {
    // An int32 X never equals a pool value outside int32's range.
    if (xt.dtype == DType::kI32)
      std::erase_if(list, [](const Gram& g) {
        for (int64_t v : g.values)
          if (v < INT32_MIN || v > INT32_MAX) return true;
        return false;
      });
    // Each factor capped at the bound, so the product cannot overflow.
    const int64_t skips = len == 1 ? 1 : std::min({t.max_skip, c, kMaxTfIdfNodes}) + 1;
    nodes += skips * (3 * std::min(len, kMaxTfIdfNodes) + 3);
    if (nodes > kMaxTfIdfNodes) break;  // and no overflow
  }
  if (nodes > kMaxTfIdfNodes)
    im.fail(
        fmt::format("the pool's n-gram lengths and max_skip_count ({}) would take about {} "
                    "nodes, over ampx's bound of {}",
                    t.max_skip, nodes, kMaxTfIdfNodes));

  if (c == 0) {  // an empty input (after a Tokenizer, say): a zero output, as the reference
    im.bind(n, 0, f32_constant(im, std::vector<float>(size_t(b * out_size), 0.0f), out_shape));
    return;
  }
  if (!batched) x = im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{1, c}}});
  std::vector<ValueId> parts;
  std::vector<int64_t> part_columns;
  for (const auto& [len, list] : grams) {
    if (list.empty()) continue;
    const ValueId cnt = count_grams(im, x, b, c, len, list, t.max_skip);
    if (cnt == kNone) continue;  // no window of this length fits
    parts.push_back(cnt);
    for (const auto& g : list) part_columns.push_back(g.column);
  }
  if (parts.empty()) {
    im.bind(n, 0, f32_constant(im, std::vector<float>(size_t(b * out_size), 0.0f), out_shape));
    return;
  }
  const ValueId counts =
      parts.size() == 1 ? parts[0] : im.emit1("Concat", parts, {{"axis", int64_t{1}}});
  const auto kg = static_cast<int64_t>(part_columns.size());
  im.check_size({DType::kF32, {kg, out_size}}, "the n-gram scatter");
  std::vector<float> scatter(size_t(kg * out_size), 0.0f);
  for (int64_t r = 0; r < kg; ++r) scatter[size_t(r * out_size + part_columns[size_t(r)])] = 1.0f;
  ValueId y = im.emit1("MatMul", {counts, f32_constant(im, scatter, {kg, out_size})});
  if (t.mode == "IDF") {
    const ValueId seen = im.emit1("Greater", {y, f32_constant(im, {0.0f}, {})});
    y = im.emit1("Cast", {seen}, {{"to", int64_t(to_c(DType::kF32))}});
  }
  if (t.mode != "TF" && !t.weights.empty()) {
    const std::vector<float> w(t.weights.begin(), t.weights.begin() + out_size);
    y = im.emit1("Mul", {y, f32_constant(im, w, {out_size})});
  }
  if (!batched) y = im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{out_size}}});
  im.bind(n, 0, y);
}

}  // namespace ampx::onnx_io
