// Checkpoint files on their own: a round trip keeps every tensor and the
// metadata (empty and scalar tensors included: a fuzz finding), and a
// truncated or foreign file is one line naming the file.
#include <ampx/train/checkpoint.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <limits>

using namespace ampx;
using namespace ampx::train;

namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("ampx_ckpt_" + std::to_string(::getpid()) + "_" + name);
}

HostTensor f32(const std::string& name, Shape shape, float first) {
  HostTensor t{name, {DType::kF32, shape}, {}};
  const auto n = static_cast<size_t>(element_count(shape));
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + static_cast<float>(i);
  t.data.resize(n * 4);
  if (n) std::memcpy(t.data.data(), v.data(), n * 4);
  return t;
}

Checkpoint sample() {
  Checkpoint c;
  c.state = {f32("fc.weight", {2, 3}, 0.5f), f32("empty", {0, 4}, 0.0f), f32("scalar", {}, 7.0f),
             f32("fc.weight/adam_m", {2, 3}, -1.0f)};
  c.epoch = 3;
  c.step = 135;
  c.seed = 42;
  c.model = "00112233aabbccdd";
  c.options = R"({"optimizer":"adam"})";
  return c;
}

TEST(Checkpoint, RoundTripKeepsTensorsInOrderAndMetadata) {
  const auto file = temp_file("roundtrip.ampxckpt");
  const Checkpoint c = sample();
  write_checkpoint(file, c);
  const Checkpoint r = read_checkpoint(file);
  EXPECT_EQ(r.epoch, 3);
  EXPECT_EQ(r.step, 135);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.model, c.model);
  EXPECT_EQ(r.options, c.options);
  ASSERT_EQ(r.state.size(), c.state.size());
  for (size_t i = 0; i < c.state.size(); ++i) {
    EXPECT_EQ(r.state[i].name, c.state[i].name);
    EXPECT_EQ(r.state[i].type, c.state[i].type);
    EXPECT_EQ(r.state[i].data, c.state[i].data);
  }
  std::filesystem::remove(file);
}

TEST(Checkpoint, KeepsTheNewestAndFindsTheLatest) {
  const auto dir = temp_file("keep");
  std::filesystem::remove_all(dir);
  Checkpoint c = sample();
  for (int e = 1; e <= 5; ++e) {
    c.epoch = e;
    save_checkpoint(dir, c, 2);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "epoch-0003.ampxckpt"));
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0004.ampxckpt"));
  EXPECT_EQ(latest_checkpoint(dir), dir / "epoch-0005.ampxckpt");
  std::filesystem::remove_all(dir);
}

std::string error_reading(const std::filesystem::path& file) {
  try {
    (void)read_checkpoint(file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checkpoint, TruncatedOrForeignFilesAreOneLineErrors) {
  const auto file = temp_file("bad.ampxckpt");
  write_checkpoint(file, sample());
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 10);
  EXPECT_NE(error_reading(file).find(file.string() + ": tensor"), std::string::npos)
      << error_reading(file);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, 20);
  EXPECT_NE(error_reading(file).find(": truncated"), std::string::npos) << error_reading(file);
  std::string foreign = bytes;
  const auto at = foreign.find(kCheckpointFormat);
  foreign.replace(at, 4, "xxxx");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << foreign;
  EXPECT_NE(error_reading(file).find("not an ampx checkpoint"), std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

// A fuzz finding: a data offset of 8e57 (a JSON float) was converted to an
// integer without a range check (undefined behaviour) instead of refused.
TEST(Checkpoint, NonIntegerOffsetsAndShapesAreRefused) {
  const auto file = temp_file("float.ampxckpt");
  const std::string header =
      R"({"__metadata__":{"format":"ampx.checkpoint/2","epoch":"1","step":"1","seed":"0",)"
      R"("model":"m","options":"{}","crc32":"{}"},)"
      R"("w":{"dtype":"F32","shape":[1],"data_offsets":[0,8.3e57]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header + std::string(4, '\0');
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_NE(error_reading(file).find("tensor 'w' has invalid data_offsets"), std::string::npos)
      << error_reading(file);
  std::string shape = bytes;
  shape.replace(shape.find("[1]"), 3, "[1.5]");
  shape.replace(shape.find("8.3e57"), 6, "4   ");  // the header keeps its length
  std::ofstream(file, std::ios::binary | std::ios::trunc) << shape;
  EXPECT_NE(error_reading(file).find("tensor 'w' has an invalid shape"), std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

// A fuzz finding: a "format" that is not a string threw the JSON library's
// own type_error instead of the reader's one line.
TEST(Checkpoint, AFormatThatIsNotAStringIsRefusedInOwnWords) {
  const auto file = temp_file("format.ampxckpt");
  const std::string header = R"({"__metadata__":{"format":["ampx.checkpoint/1"]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes + header;
  EXPECT_NE(error_reading(file).find("not an ampx checkpoint"), std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

}  // namespace

namespace {

// The loss-scale state round-trips exactly; a checkpoint without it reads as
// "none"; a malformed one (a float where an integer belongs, a scale that is
// not positive) is refused in one line.
// An empty tensor sits at the offset where the next one starts: offsets
// alone cannot order the two (a fuzz finding: the order changed between a
// write and a read). The writer states the order; a bad one is refused.
TEST(Checkpoint, AnEmptyTensorKeepsItsPlaceAndABadOrderIsRefused) {
  Checkpoint c = sample();
  c.state = {f32("s", {2}, 1.0f), f32("z", {0, 4}, 0.0f), f32("a", {3}, 2.0f)};
  const auto file = temp_file("empty-order.ampxckpt");
  write_checkpoint(file, c);
  const Checkpoint r = read_checkpoint(file);
  ASSERT_EQ(r.state.size(), 3u);
  EXPECT_EQ(r.state[0].name, "s");
  EXPECT_EQ(r.state[1].name, "z");
  EXPECT_EQ(r.state[2].name, "a");
  // The order naming a tensor twice: one line, naming the file.
  std::string bytes;
  {
    std::ifstream f(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const std::string good = R"(\"s\",\"z\",\"a\")", twice = R"(\"s\",\"z\",\"s\")";
  const size_t at = bytes.find(good);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, good.size(), twice);
  std::ofstream(file, std::ios::binary) << bytes;
  try {
    (void)read_checkpoint(file);
    FAIL() << "a bad order was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the tensor order does not name every tensor once"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(file);
}

TEST(Checkpoint, KeepsTheLossScaleStateAndRefusesAMalformedOne) {
  const auto file = temp_file("scale.ampxckpt");
  Checkpoint c = sample();
  EXPECT_EQ(c.loss_scale_schedule, "none");
  c.loss_scale_schedule = "dynamic:16777216,2,2000";
  c.loss_scale = {.scale = 32768,
                  .good_steps = 1700,
                  .last_overflow_step = 9,
                  .overflow_steps = 9,
                  .steps = 26,
                  .consecutive_overflows = 0};
  write_checkpoint(file, c);
  const Checkpoint r = read_checkpoint(file);
  EXPECT_EQ(r.loss_scale_schedule, c.loss_scale_schedule);
  EXPECT_EQ(r.loss_scale, c.loss_scale);

  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string b = bytes;
    const size_t at = b.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    EXPECT_EQ(from.size(), to.size());  // the header keeps its length
    b.replace(at, from.size(), to);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << b;
    return error_reading(file);
  };
  EXPECT_NE(with(R"(\"good_steps\":1700)", R"(\"good_steps\":17e2)")
                .find("the loss-scale state has no integer 'good_steps'"),
            std::string::npos);
  EXPECT_NE(with(R"(\"scale\":32768.0)", R"(\"scale\":-3276.8)")
                .find("the loss scale is not a positive number"),
            std::string::npos);
  EXPECT_NE(
      with(R"(\"schedule\":)", R"(\"schedulx\":)").find("the loss-scale state has no schedule"),
      std::string::npos);
  std::filesystem::remove(file);
}

}  // namespace

namespace {

std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream f(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Where the tensors' data starts: after the length and the header.
size_t data_start(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
  return 8 + static_cast<size_t>(n);
}

// Issue 36: 4 flipped bytes in tensor data were read back as weights. Every
// byte of every tensor's data, flipped alone, is found, naming its tensor.
TEST(Checkpoint, AFlippedByteInAnyTensorIsRefusedNamingIt) {
  const auto file = temp_file("flip.ampxckpt");
  const Checkpoint c = sample();
  write_checkpoint(file, c);
  const std::string good = bytes_of(file);
  size_t at = data_start(good);
  for (const HostTensor& t : c.state) {
    for (size_t k = 0; k < t.data.size(); ++k) {
      std::string bad = good;
      bad[at + k] = static_cast<char>(bad[at + k] ^ 0x10);
      write_bytes(file, bad);
      const std::string e = error_reading(file);
      EXPECT_NE(
          e.find(file.string() + ": tensor '" + t.name + "': its data does not match its checksum"),
          std::string::npos)
          << e;
    }
    at += t.data.size();
  }
  EXPECT_EQ(at, good.size());
  // The issue's four bytes at once.
  std::string four = good;
  for (size_t k = 0; k < 4; ++k) four[data_start(good) + k] = '\xff';
  write_bytes(file, four);
  EXPECT_NE(error_reading(file).find("tensor 'fc.weight': its data does not match"),
            std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

// Issue 36: a checkpoint of NaN weights resumed silently and wrote more of
// them. The writer refuses it, writing nothing; a file that holds one
// anyway (with a checksum that matches) is refused on reading, naming it.
TEST(Checkpoint, NonFiniteStateIsNeitherWrittenNorRead) {
  const auto file = temp_file("nan.ampxckpt");
  std::filesystem::remove(file);
  Checkpoint c = sample();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(c.state[3].data.data() + 8, &nan, 4);  // fc.weight/adam_m, element 2
  try {
    write_checkpoint(file, c);
    FAIL() << "a NaN moment was written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'fc.weight/adam_m' holds NaN (element 2 of 6)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(file));
  // A file with an infinite weight and its matching CRC-32.
  write_checkpoint(file, sample());
  std::string bytes = bytes_of(file);
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data() + data_start(bytes) + 4, &inf, 4);  // fc.weight, element 1
  uLong crc = crc32_z(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data() + data_start(bytes)), 24);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
  const std::string key = R"(\"fc.weight\":\")";
  const size_t at = bytes.find(key);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at + key.size(), 8, hex);
  write_bytes(file, bytes);
  EXPECT_NE(error_reading(file).find(file.string() + ": tensor 'fc.weight' holds infinity"),
            std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

// A version 1 file (no checksums) cannot be verified: refused, saying why.
TEST(Checkpoint, AVersionOneFileIsRefusedSayingWhy) {
  const auto file = temp_file("v1.ampxckpt");
  write_checkpoint(file, sample());
  std::string bytes = bytes_of(file);
  bytes.replace(bytes.find(kCheckpointFormat), std::strlen(kCheckpointFormat), "ampx.checkpoint/1");
  write_bytes(file, bytes);
  EXPECT_NE(error_reading(file).find("written by an older ampx (format ampx.checkpoint/1, "
                                     "without tensor checksums)"),
            std::string::npos)
      << error_reading(file);
  std::filesystem::remove(file);
}

// Issue 36: `--checkpoint` naming a dangling link leaked "filesystem
// error: ... File exists" after the first epoch.
TEST(Checkpoint, TheDirectoryIsCheckedInOneLine) {
  const auto link = temp_file("dangling");
  std::filesystem::remove(link);
  std::filesystem::create_symlink(temp_file("nowhere"), link);
  const auto message = [](const std::filesystem::path& dir) -> std::string {
    try {
      make_checkpoint_dir(dir);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string e = message(link);
  EXPECT_NE(e.find(link.string() + ": a symbolic link to '"), std::string::npos) << e;
  EXPECT_NE(e.find("which does not exist"), std::string::npos) << e;
  EXPECT_EQ(e.find("filesystem error"), std::string::npos) << e;
  std::filesystem::remove(link);
  const auto file = temp_file("a-file");
  write_bytes(file, "x");
  EXPECT_NE(message(file).find(": not a directory"), std::string::npos) << message(file);
  EXPECT_NE(message(file / "sub").find("cannot create the checkpoint directory"), std::string::npos)
      << message(file / "sub");
  std::filesystem::remove(file);
  const auto dir = temp_file("made") / "deeper";
  EXPECT_EQ(message(dir), "no error");
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove_all(dir.parent_path());
}

}  // namespace
