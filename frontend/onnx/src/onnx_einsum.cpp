// Einsum (opset 12+), imported as the ops every backend already runs
// (docs/ONNX.md): per operand, ReduceSum over the labels nobody else needs;
// then operands contracted pairwise, left to right, each pair as
//   Transpose - Reshape - MatMul - Reshape
// with the shared labels still needed later as MatMul's batch dims, the
// shared labels no longer needed as its inner dimension, and each side's
// own labels as its rows or columns; finally a Transpose to the output's
// order. The MatMul is the op the AMP planner runs in 16-bit (white list),
// as PyTorch autocast does for einsum.
// An ellipsis stands for the same broadcast dims in every operand (aligned
// right, as NumPy). A label repeated inside one operand (a diagonal) is
// taken first, by a Gather of every (d + 1)-th entry of the two dims
// merged; shared labels of different sizes are refused (no broadcasting of
// labelled dims).
#include <fmt/format.h>
#include <ampx/fileio/file_error.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// A labelled operand: its value and one label per dimension. Letters are
// the equation's labels; the ellipsis dims are labelled '0' + k, k counted
// from the right, so that they match across operands of different rank.
struct Term {
  ValueId value;
  std::string labels;
};

std::string strip_spaces(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != ' ') out += ch;
  return out;
}

// The labels of one side of the equation for an operand of `rank` dims.
std::string expand_ellipsis(Importer& im, const std::string& term, size_t rank,
                            size_t* ellipsis_rank) {
  const size_t at = term.find("...");
  if (at == std::string::npos) {
    if (term.size() != rank)
      im.fail(fmt::format("term '{}' has {} labels for an operand of rank {}", term, term.size(),
                          rank));
    return term;
  }
  const std::string before = term.substr(0, at), after = term.substr(at + 3);
  if (after.find("...") != std::string::npos)
    im.fail(fmt::format("term '{}' has two ellipses", term));
  if (before.size() + after.size() > rank)
    im.fail(fmt::format("term '{}' has more labels than its operand's rank {}", term, rank));
  const size_t e = rank - before.size() - after.size();
  *ellipsis_rank = std::max(*ellipsis_rank, e);
  std::string dots;
  for (size_t k = e; k-- > 0;) dots += static_cast<char>('0' + k);  // '0' is the last dim
  return before + dots + after;
}

std::vector<int64_t> dims_of(Importer& im, ValueId v) {
  const Shape s = im.type(v).shape;
  return {s.begin(), s.end()};
}

// `t` with each label repeated inside it (a diagonal, 'ii->i') taken once:
// the second axis moved next to the first, the two merged into d * d, and
// the diagonal's d entries (every (d + 1)-th) gathered.
Term diagonals(Importer& im, Term t, const std::string& eq, size_t k) {
  for (size_t j = 0; j < t.labels.size(); ++j) {
    const size_t i = t.labels.find(t.labels[j]);
    if (i == j) continue;
    const auto dims = dims_of(im, t.value);
    if (dims[i] != dims[j])
      im.fail(fmt::format("equation '{}': label '{}' repeats in input {} with sizes {} and {}", eq,
                          t.labels[j], k, dims[i], dims[j]));
    std::vector<int64_t> perm;
    for (size_t a = 0; a < dims.size(); ++a) {
      if (a == j) continue;
      perm.push_back(static_cast<int64_t>(a));
      if (a == i) perm.push_back(static_cast<int64_t>(j));
    }
    const ValueId moved = im.emit1("Transpose", {t.value}, {{"perm", perm}});
    const int64_t d = dims[i];
    std::vector<int64_t> merged;
    for (int64_t a : perm)
      if (a != static_cast<int64_t>(j))
        merged.push_back(a == static_cast<int64_t>(i) ? d * d : dims[static_cast<size_t>(a)]);
    const ValueId flat = im.emit1("Reshape", {moved}, {{"shape", merged}});
    std::vector<int64_t> idx(static_cast<size_t>(d));
    for (int64_t e = 0; e < d; ++e) idx[static_cast<size_t>(e)] = e * (d + 1);
    t.value =
        im.emit1("Gather", {flat, im.constant_i64(idx, {d})}, {{"axis", static_cast<int64_t>(i)}});
    t.labels.erase(j, 1);
    j = i;  // labels after i shifted; look again from there
  }
  return t;
}

// Sums `t` over the labels not in `keep`.
Term reduce_unneeded(Importer& im, Term t, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string left;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (keep.find(t.labels[i]) == std::string::npos)
      axes.push_back(static_cast<int64_t>(i));
    else
      left += t.labels[i];
  }
  if (axes.empty()) return t;
  t.value = im.emit1("ReduceSum", {t.value}, {{"axes", axes}, {"keepdims", int64_t{0}}});
  t.labels = left;
  return t;
}

// `t` with its dims in the order of `order` (a permutation of its labels).
ValueId permute(Importer& im, const Term& t, const std::string& order) {
  std::vector<int64_t> perm;
  for (char ch : order) perm.push_back(static_cast<int64_t>(t.labels.find(ch)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (identity) return t.value;
  return im.emit1("Transpose", {t.value}, {{"perm", perm}});
}

// Contracts a and b; `keep` are the labels needed after this pair.
Term contract(Importer& im, const Term& a, const Term& b, const std::string& keep,
              const std::map<char, int64_t>& size) {
  std::string batch, inner, a_only, b_only;
  for (char ch : a.labels) {
    if (b.labels.find(ch) == std::string::npos)
      a_only += ch;
    else if (keep.find(ch) != std::string::npos)
      batch += ch;
    else
      inner += ch;
  }
  for (char ch : b.labels)
    if (a.labels.find(ch) == std::string::npos) b_only += ch;
  auto count = [&](const std::string& labels) {
    int64_t p = 1;
    for (char ch : labels) p *= size.at(ch);
    return p;
  };
  std::vector<int64_t> lead;
  for (char ch : batch) lead.push_back(size.at(ch));
  auto view = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> s = lead;
    s.push_back(rows);
    s.push_back(cols);
    return s;
  };
  const ValueId av = im.emit1("Reshape", {permute(im, a, batch + a_only + inner)},
                              {{"shape", view(count(a_only), count(inner))}});
  const ValueId bv = im.emit1("Reshape", {permute(im, b, batch + inner + b_only)},
                              {{"shape", view(count(inner), count(b_only))}});
  const ValueId prod = im.emit1("MatMul", {av, bv});
  std::vector<int64_t> out = lead;
  for (char ch : a_only + b_only) out.push_back(size.at(ch));
  return {im.emit1("Reshape", {prod}, {{"shape", out}}), batch + a_only + b_only};
}

}  // namespace

void einsum(Importer& im, const onnx::NodeProto& n) {
  const auto eq_attr = im.attr_string(n, "equation");
  if (!eq_attr) im.fail("attribute 'equation' is required");
  const std::string eq = strip_spaces(*eq_attr);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<ValueId> ins;
  for (int i = 0; i < n.input_size(); ++i) ins.push_back(im.input(n, i));
  if (terms.size() != ins.size())
    im.fail(fmt::format("equation '{}' has {} terms for {} inputs", eq, terms.size(), ins.size()));
  for (std::string t : terms) {
    for (size_t at; (at = t.find("...")) != std::string::npos;) t.erase(at, 3);
    for (size_t i = 0; i < t.size(); ++i)
      if (!std::isalpha(static_cast<unsigned char>(t[i]))) {
        // The whole character, not its first byte (half a UTF-8 character
        // is not text); a byte that starts none is one byte.
        const size_t len = std::max<size_t>(1, fileio::utf8_char_size(t, i));
        im.fail(fmt::format("equation '{}': '{}' is not a label", eq, t.substr(i, len)));
      }
  }

  // Label every operand, checking that shared labels have one size.
  size_t ellipsis_rank = 0;
  std::vector<Term> ops;
  std::map<char, int64_t> size;
  for (size_t k = 0; k < ins.size(); ++k) {
    const auto dims = dims_of(im, ins[k]);
    Term t{ins[k], expand_ellipsis(im, terms[k], dims.size(), &ellipsis_rank)};
    t = diagonals(im, std::move(t), eq, k);
    const auto tdims = dims_of(im, t.value);
    for (size_t i = 0; i < t.labels.size(); ++i) {
      const char ch = t.labels[i];
      const auto [it, fresh] = size.emplace(ch, tdims[i]);
      if (!fresh && it->second != tdims[i]) {
        if (ch >= '0' && ch <= '9')
          im.fail(
              fmt::format("equation '{}': the ellipsis dims differ between inputs ({} and {}); "
                          "broadcasting them is not supported",
                          eq, it->second, tdims[i]));
        im.fail(fmt::format("equation '{}': label '{}' is {} in one input and {} in input {}", eq,
                            ch, it->second, tdims[i], k));
      }
    }
    ops.push_back(std::move(t));
  }
  // The output's labels: explicit, or (implicit mode) the ellipsis dims and
  // then every letter used once, in alphabetical order.
  std::string out;
  std::string dots;
  for (size_t k = ellipsis_rank; k-- > 0;) dots += static_cast<char>('0' + k);
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    const size_t at = rhs.find("...");
    out = at == std::string::npos ? rhs : rhs.substr(0, at) + dots + rhs.substr(at + 3);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!size.contains(out[i]))
        im.fail(fmt::format("equation '{}': output label '{}' is in no input", eq, out[i]));
      if (out.find(out[i]) != i)
        im.fail(fmt::format("equation '{}': output label '{}' repeats", eq, out[i]));
    }
  } else {
    std::map<char, int> uses;
    for (const Term& t : ops)
      for (char ch : t.labels)
        if (std::isalpha(static_cast<unsigned char>(ch))) ++uses[ch];
    out = dots;
    for (const auto& [ch, u] : uses)
      if (u == 1) out += ch;
  }
  im.set_origin("Einsum");
  // Labels needed after operand k: the output's and those of later operands.
  auto needed_after = [&](size_t k) {
    std::string keep = out;
    for (size_t j = k + 1; j < ops.size(); ++j) keep += ops[j].labels;
    return keep;
  };
  Term acc = reduce_unneeded(im, ops[0], needed_after(0));
  for (size_t k = 1; k < ops.size(); ++k) {
    const Term b = reduce_unneeded(im, ops[k], needed_after(k) + acc.labels);
    acc = contract(im, acc, b, needed_after(k), size);
  }
  acc = reduce_unneeded(im, acc, out);
  im.bind(n, 0, permute(im, acc, out));
}

}  // namespace ampx::onnx_io
