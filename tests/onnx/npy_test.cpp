// .npy files: round trips in every supported dtype, NumPy's header forms,
// and one-line errors for files that are not what they claim.
#include <gtest/gtest.h>
#include <unistd.h>
#include <ampx/exec/npy.hpp>
#include <ampx/half.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace {

namespace fs = std::filesystem;

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("ampx_npy_" + std::to_string(::getpid()) + "_" + name);
}

ampx::HostTensor random_tensor(ampx::DType dt, ampx::Shape shape, uint32_t seed) {
  ampx::HostTensor t{"t", {dt, shape}, {}};
  t.data.resize(static_cast<size_t>(ampx::element_count(shape)) * ampx::dtype_size(dt));
  std::mt19937 rng(seed);
  for (auto& b : t.data) b = static_cast<std::byte>(rng() & 0xff);
  if (dt == ampx::DType::kBool)
    for (auto& b : t.data) b = static_cast<std::byte>(static_cast<uint8_t>(b) & 1);
  if (dt == ampx::DType::kF32)  // finite values: random bits can be NaN
    for (size_t i = 0; i < t.data.size() / 4; ++i) {
      const float f = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f + 1e-3f;
      std::memcpy(t.data.data() + 4 * i, &f, 4);
    }
  return t;
}

TEST(Npy, RoundTripsEveryDtypeAndRank) {
  using D = ampx::DType;
  uint32_t seed = 1;
  for (D dt : {D::kF32, D::kF16, D::kF64, D::kI64, D::kI32, D::kI8, D::kU8, D::kBool}) {
    for (const ampx::Shape& shape :
         {ampx::Shape{}, ampx::Shape{7}, ampx::Shape{3, 5}, ampx::Shape{2, 1, 3, 4}}) {
      const auto t = random_tensor(dt, shape, seed++);
      const auto path = temp("rt.npy");
      ampx::write_npy(path, t);
      const auto back = ampx::read_npy(path);
      EXPECT_EQ(back.type, t.type) << ampx::dtype_name(dt) << ampx::shape_str(shape);
      EXPECT_EQ(back.data, t.data) << ampx::dtype_name(dt) << ampx::shape_str(shape);
      // NumPy's alignment rule: the data starts at a multiple of 64.
      EXPECT_EQ(fs::file_size(path) - t.data.size(),
                64u * ((fs::file_size(path) - t.data.size()) / 64));
      fs::remove(path);
    }
  }
}

TEST(Npy, Bf16IsWrittenAsExactFloat32) {
  ampx::HostTensor t{"b", {ampx::DType::kBF16, {3}}, std::vector<std::byte>(6)};
  const float vals[] = {1.5f, -2.25f, 1e-3f};
  for (int i = 0; i < 3; ++i) {
    const uint16_t h = ampx::float_to_bf16_bits(vals[i]);
    std::memcpy(t.data.data() + 2 * i, &h, 2);
  }
  const auto path = temp("bf16.npy");
  ampx::write_npy(path, t);
  const auto back = ampx::read_npy(path);
  ASSERT_EQ(back.type.dtype, ampx::DType::kF32);
  for (int i = 0; i < 3; ++i) {
    float f;
    std::memcpy(&f, back.data.data() + 4 * i, 4);
    EXPECT_EQ(f, ampx::bf16_bits_to_float(ampx::float_to_bf16_bits(vals[i])));
  }
  fs::remove(path);
}

// A version-2 header with the keys in another order, as other writers make.
TEST(Npy, ReadsVersion2AndOtherKeyOrders) {
  const std::string header = "{'shape': (2, 2), 'fortran_order': False, 'descr': '<i4'}";
  std::string file = "\x93NUMPY";
  file += '\x02';
  file += '\x00';
  const uint32_t len = static_cast<uint32_t>(header.size());
  file.append(reinterpret_cast<const char*>(&len), 4);
  file += header;
  const int32_t data[] = {1, -2, 3, 4};
  file.append(reinterpret_cast<const char*>(data), sizeof data);
  const auto path = temp("v2.npy");
  std::ofstream(path, std::ios::binary) << file;
  const auto t = ampx::read_npy(path);
  EXPECT_EQ(t.type.dtype, ampx::DType::kI32);
  EXPECT_EQ(t.type.shape, (ampx::Shape{2, 2}));
  EXPECT_EQ(std::memcmp(t.data.data(), data, sizeof data), 0);
  fs::remove(path);
}

// A version-1 .npy file: this header (under 256 bytes) and data_bytes of data.
std::string with_header(const std::string& h, size_t data_bytes) {
  std::string f = "\x93NUMPY";
  f += '\x01';
  f += '\x00';
  f += static_cast<char>(h.size());
  f += '\x00';
  return f + h + std::string(data_bytes, '\x01');
}

TEST(Npy, BadFilesAreOneLineErrorsNamingTheFile) {
  auto error = [](const std::string& content, const std::string& name) {
    const auto path = temp(name);
    std::ofstream(path, std::ios::binary) << content;
    std::string msg;
    try {
      (void)ampx::read_npy(path);
    } catch (const ampx::NpyError& e) {
      msg = e.what();
    }
    fs::remove(path);
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  };
  EXPECT_NE(error("hello", "magic.npy").find("no NUMPY magic"), std::string::npos);
  EXPECT_NE(
      error(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "be.npy")
          .find("'>f4' is not supported"),
      std::string::npos);
  EXPECT_NE(error(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8),
                  "fortran.npy")
                .find("Fortran"),
            std::string::npos);
  EXPECT_NE(error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8),
                  "short.npy")
                .find("needs 12"),
            std::string::npos);
  // Found by tests/fuzz: negative or huge dimensions whose product wraps
  // around to the data there is, and a shape that is not a tuple.
  const auto huge = std::to_string(int64_t{1} << 62);
  EXPECT_NE(error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -1), }", 8),
                  "negative.npy")
                .find("negative dimension -2"),
            std::string::npos);
  EXPECT_NE(error(with_header(
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + huge + ", 4), }", 8),
                  "wraps.npy")
                .find("needs more"),
            std::string::npos);
  EXPECT_NE(error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", 8),
                  "not_a_tuple.npy")
                .find("expected a tuple"),
            std::string::npos);
  EXPECT_THROW((void)ampx::read_npy(temp("does_not_exist.npy")), ampx::NpyError);
}

// An empty array (a zero dimension, even next to a huge one) is valid.
TEST(Npy, EmptyArraysAreRead) {
  const auto path = temp("empty.npy");
  const std::string h =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 0), }";
  std::ofstream(path, std::ios::binary) << with_header(h, 0);
  const ampx::HostTensor t = ampx::read_npy(path);
  fs::remove(path);
  EXPECT_EQ(t.type.shape, (ampx::Shape{int64_t{1} << 62, 0}));
  EXPECT_TRUE(t.data.empty());
}

}  // namespace
