#include <ampx/exec/npy.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/train/datasets.hpp>

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>

#include <ampx/train/shuffle.hpp>

namespace ampx::train {
namespace {

constexpr int64_t kDigits = 1797, kPixels = 64, kTrain = 1437;

std::string gunzip(const std::filesystem::path& path) {
  // Opened through the one input reader first: a FIFO or a directory is
  // refused with its own message, a missing file named.
  (void)fileio::RegularFile(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::invalid_argument(path.string() + ": cannot open");
  std::string out;
  char buf[1 << 15];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (64u << 20)) break;
  }
  int err = 0;
  const char* msg = n < 0 ? gzerror(f, &err) : nullptr;
  const std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0) throw std::invalid_argument(path.string() + ": not a valid gzip file (" + why + ")");
  return out;
}

Dataset make(const std::vector<float>& pixels, const std::vector<int64_t>& labels,
             std::span<const int64_t> rows) {
  Dataset d;
  const auto n = static_cast<int64_t>(rows.size());
  d.inputs = {
      "input", {DType::kF32, {n, 1, 8, 8}}, std::vector<std::byte>(rows.size() * kPixels * 4)};
  d.labels = {"labels", {DType::kI64, {n}}, std::vector<std::byte>(rows.size() * 8)};
  for (size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(d.inputs.data.data() + i * kPixels * 4,
                pixels.data() + static_cast<size_t>(rows[i]) * kPixels, kPixels * 4);
    std::memcpy(d.labels.data.data() + i * 8, &labels[static_cast<size_t>(rows[i])], 8);
  }
  return d;
}

}  // namespace

std::filesystem::path digits_csv_path() {
  if (const char* env = std::getenv("AMPX_DIGITS_CSV"); env && *env) return env;
  return "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
}

SplitDataset load_digits() {
  const std::filesystem::path path = digits_csv_path();
  if (!std::filesystem::exists(path))
    throw std::invalid_argument("builtin:digits: " + path.string() +
                                ": no such file (install python3-sklearn, or set AMPX_DIGITS_CSV)");
  std::istringstream text(gunzip(path));
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  std::string line;
  int64_t row = 0;
  while (std::getline(text, line)) {
    if (line.empty()) continue;
    ++row;
    std::istringstream cells(line);
    std::string cell;
    std::vector<double> values;
    while (std::getline(cells, cell, ',')) {
      char* end = nullptr;
      const double v = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str()) {
        throw std::invalid_argument(path.string() + ": line " + std::to_string(row) + ": '" +
                                    std::string(fileio::utf8_prefix(cell, 20)) +
                                    "' is not a number");
      }
      values.push_back(v);
    }
    if (values.size() != kPixels + 1 || values.back() < 0 || values.back() > 9)
      throw std::invalid_argument(path.string() + ": line " + std::to_string(row) +
                                  ": expected 64 pixels and a label 0-9");
    for (int i = 0; i < kPixels; ++i)
      pixels.push_back(static_cast<float>(values[static_cast<size_t>(i)] / 16.0));
    labels.push_back(static_cast<int64_t>(values.back()));
  }
  if (row != kDigits)
    throw std::invalid_argument(path.string() + ": " + std::to_string(row) + " rows, expected " +
                                std::to_string(kDigits));
  const std::vector<int64_t> order = detail::shuffled(kDigits, 0);
  const std::span<const int64_t> all(order);
  return {make(pixels, labels, all.first(kTrain)), make(pixels, labels, all.subspan(kTrain))};
}

Dataset load_dataset(std::string_view spec, bool test) {
  if (spec == "builtin:digits") {
    SplitDataset s = load_digits();
    return test ? std::move(s.test) : std::move(s.train);
  }
  if (spec.starts_with("builtin:"))
    throw std::invalid_argument("unknown built-in dataset '" + std::string(spec) +
                                "' (expected builtin:digits)");
  std::filesystem::path inputs, labels;
  if (const auto comma = spec.find(','); comma != std::string_view::npos) {
    inputs = std::string(spec.substr(0, comma));
    labels = std::string(spec.substr(comma + 1));
  } else {
    inputs = std::filesystem::path(std::string(spec)) / "inputs.npy";
    labels = std::filesystem::path(std::string(spec)) / "labels.npy";
  }
  Dataset d{read_npy(inputs), read_npy(labels)};
  d.inputs.name = "input";
  d.labels.name = "labels";
  return d;
}

}  // namespace ampx::train
