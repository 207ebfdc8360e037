// Test helpers for the ONNX importer tests: a temporary directory, a model
// built with the ONNX protobuf classes, and the one-line import error.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>
#include <ampx/onnx/onnx_import.hpp>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ampx_onnx_test {

namespace fs = std::filesystem;
using ampx::onnx_io::import_onnx;
using ampx::onnx_io::ImportOptions;
using ampx::onnx_io::OnnxError;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("ampx_onnx_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
             std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& s) const { return path_ / s; }

 private:
  fs::path path_;
};

// A model under construction: f32 initializers, nodes, typed inputs/outputs.
struct ModelMaker {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit ModelMaker(int64_t opset = 13) {
    m.set_ir_version(8);
    m.set_producer_name("ampx-test");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("test");
  }
  onnx::ValueInfoProto* value(onnx::ValueInfoProto* v, const std::string& name, int elem,
                              const std::vector<std::string>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
    return v;
  }
  void input(const std::string& name, const std::vector<std::string>& dims,
             int elem = onnx::TensorProto::FLOAT) {
    value(g->add_input(), name, elem, dims);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  void init_f32(const std::string& name, std::vector<int64_t> dims, float start = 0.25f) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(start + 0.125f * static_cast<float>(i % 7));
  }
  void init_f32_values(const std::string& name, std::vector<float> values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) t->add_float_data(v);
  }
  void init_i64(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void init_scalar(const std::string& name, float v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins,
                        std::vector<std::string> outs, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_floats(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  static void attr_string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  fs::path save(const fs::path& path) const {
    std::ofstream f(path, std::ios::binary);
    m.SerializeToOstream(&f);
    return path;
  }
};

inline std::string import_error(const fs::path& path, const ImportOptions& opts = {}) {
  try {
    (void)import_onnx(path, opts);
  } catch (const OnnxError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    EXPECT_NE(msg.find(path.string()), std::string::npos) << "names the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "import of " << path << " did not fail";
  return "";
}

// An f32 host tensor of `v`, and an f32 tensor's values.
inline ampx::HostTensor f32_tensor(const std::string& name, ampx::Shape shape,
                                   std::vector<float> v) {
  ampx::HostTensor t{
      name, {ampx::DType::kF32, std::move(shape)}, std::vector<std::byte>(v.size() * 4)};
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * 4);
  return t;
}

inline std::vector<float> floats(const ampx::HostTensor& t) {
  std::vector<float> v(t.data.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace ampx_onnx_test
