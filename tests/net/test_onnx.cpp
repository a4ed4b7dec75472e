// ONNX import/export: zoo round trips, PyTorch-exported fixtures
// (scripts/gen-onnx-fixtures), and the errors for what is not supported.
//
// Compiled twice: as test_onnx (everything fast), and with
// MIXTD_ONNX_TORCHVISION as test_onnx_torchvision, which only checks the
// torchvision resnet18 export generated into the build folder at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "mixtd/net/Counts.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

#ifndef MIXTD_ONNX_TORCHVISION
#include <nlohmann/json.hpp>
#endif

namespace fs = std::filesystem;
using mixtd::net::build_zoo;
using mixtd::net::Layer;
using mixtd::net::LayerKind;
using mixtd::net::load_onnx;
using mixtd::net::Network;
using mixtd::net::save_onnx;
using testing::HasSubstr;

namespace {

#ifndef MIXTD_ONNX_TORCHVISION
// Runs `f`, which must throw mixtd::Error; returns its message.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mixtd::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a mixtd::Error";
  return "";
}
#endif

// Layer-by-layer comparison of kinds, shapes and counts, for messages that
// say where two networks part.
void expect_same_layers(const Network& got, const Network& want, bool names) {
  ASSERT_EQ(got.layers.size(), want.layers.size());
  for (std::size_t i = 0; i < got.layers.size(); ++i) {
    const Layer &g = got.layers[i], &w = want.layers[i];
    SCOPED_TRACE("layer " + std::to_string(i) + ": got '" + g.name + "', want '" + w.name + "'");
    if (names) {
      EXPECT_EQ(g.name, w.name);
    }
    EXPECT_EQ(to_string(g.kind), to_string(w.kind));
    // Same wiring, by position (names may differ): the same producers, in
    // the same operand order.
    ASSERT_EQ(g.inputs.size(), w.inputs.size());
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
      EXPECT_EQ(got.index_of(g.inputs[k]), want.index_of(w.inputs[k])) << "input " << k;
    EXPECT_EQ(g.in_shape.str(), w.in_shape.str());
    EXPECT_EQ(g.out_shape.str(), w.out_shape.str());
    const auto gc = mixtd::net::counts(g), wc = mixtd::net::counts(w);
    EXPECT_EQ(gc.weights, wc.weights);
    EXPECT_EQ(gc.biases, wc.biases);
    EXPECT_EQ(gc.macs, wc.macs);
  }
}

}  // namespace

#ifndef MIXTD_ONNX_TORCHVISION

namespace {

fs::path fixture(const std::string& name) { return fs::path(MIXTD_FIXTURES_DIR) / name; }

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MIXTD_BINARY_DIR) / "test-onnx";
  fs::create_directories(dir);
  return dir / name;
}

onnx::ModelProto read_model(const fs::path& p) {
  onnx::ModelProto m;
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << p;
  return m;
}

void write_model(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(m.SerializeToOstream(&out)) << p;
}

onnx::NodeProto* node_named(onnx::ModelProto& m, const std::string& name) {
  for (auto& n : *m.mutable_graph()->mutable_node())
    if (n.name() == name) return &n;
  ADD_FAILURE() << "no node '" << name << "'";
  return nullptr;
}

onnx::AttributeProto* attr_named(onnx::NodeProto* n, const std::string& name) {
  for (auto& a : *n->mutable_attribute())
    if (a.name() == name) return &a;
  auto* a = n->add_attribute();
  a->set_name(name);
  return a;
}

onnx::TensorProto* initializer_named(onnx::ModelProto& m, const std::string& name) {
  for (auto& t : *m.mutable_graph()->mutable_initializer())
    if (t.name() == name) return &t;
  ADD_FAILURE() << "no initializer '" << name << "'";
  return nullptr;
}

std::string sanitized(std::string s) {
  for (auto& c : s)
    if (c == ':' || c == '=' || c == ',') c = '_';
  return s;
}

// ------------------------------------------------------------ round trips

class OnnxRoundTrip : public testing::TestWithParam<const char*> {};

TEST_P(OnnxRoundTrip, ZooNetworkComesBackBitIdentical) {
  const Network net = build_zoo(GetParam(), /*with_weights=*/true);
  const fs::path p = scratch(sanitized(GetParam()) + ".onnx");
  save_onnx(net, p);
  const Network back = load_onnx(p);
  expect_same_layers(back, net, /*names=*/true);
  EXPECT_TRUE(back.same_structure(net));
  EXPECT_TRUE(back.same_weights(net));
  EXPECT_EQ(mixtd::net::counts(back).params, mixtd::net::counts(net).params);
}

// vgg16 (550 MB of floats) works the same way but is too big for the suite.
INSTANTIATE_TEST_SUITE_P(Zoo, OnnxRoundTrip,
                         testing::Values("tiny", "tiny-dw", "resnet18-fmnist:width=0.25", "repvgg-fmnist:width=0.25",
                                         "resnet18", "repvgg-a0"),
                         [](const auto& info) {
                           std::string s = sanitized(info.param);
                           for (auto& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(OnnxExport, WritesOpset13WithNamedWeightsAndSymbolicBatch) {
  const Network net = build_zoo("tiny", true);
  const fs::path p = scratch("tiny-layout.onnx");
  save_onnx(net, p);
  const onnx::ModelProto m = read_model(p);
  EXPECT_EQ(m.ir_version(), 7);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  const auto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "input");
  const auto& dims = g.input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 4);
  EXPECT_EQ(dims[0].dim_param(), "batch");
  EXPECT_EQ(dims[1].dim_value(), 3);
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "fc");
  std::vector<std::string> inits;
  for (const auto& t : g.initializer()) inits.push_back(t.name());
  EXPECT_THAT(inits, testing::Contains("conv1.weight"));
  EXPECT_THAT(inits, testing::Contains("fc.bias"));
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  EXPECT_THAT(ops, testing::IsSupersetOf({"Conv", "Relu", "Add", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm"}));
  EXPECT_EQ(g.node(0).name(), "conv1");
}

// BatchNorm layers are written as BatchNormalization and folded on import,
// exactly as Network::fold_batchnorm folds them (eps chosen exact in float).
TEST(OnnxExport, BatchNormIsWrittenAndFoldedOnImport) {
  Network net;
  net.input_shape = {2, 6, 6};
  Layer conv;
  conv.name = "conv";
  conv.kind = LayerKind::Conv2d;
  conv.inputs = {"input"};
  conv.conv.out_channels = 3;
  conv.conv.kh = conv.conv.kw = 3;
  conv.conv.bias = false;
  net.add(conv);
  Layer bn;
  bn.name = "bn";
  bn.kind = LayerKind::BatchNorm;
  bn.inputs = {"conv"};
  bn.bn.eps = 1.0 / 1024;
  net.add(bn);
  Layer relu;
  relu.name = "relu";
  relu.kind = LayerKind::ReLU;
  relu.inputs = {"bn"};
  net.add(relu);
  mixtd::net::init_random_weights(net, 5);
  auto& b = net.layers[1];
  b.weight = {0.5f, 2.0f, -1.0f};
  b.bias = {0.25f, -0.5f, 1.0f};
  b.mean = {0.1f, -0.2f, 0.3f};
  b.var = {1.5f, 0.25f, 4.0f};
  const fs::path p = scratch("bn.onnx");
  save_onnx(net, p);
  const onnx::ModelProto m = read_model(p);
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  EXPECT_THAT(ops, testing::ElementsAre("Conv", "BatchNormalization", "Relu"));
  Network want = net;
  want.fold_batchnorm();
  const Network back = load_onnx(p);
  EXPECT_TRUE(back.same_weights(want));
  ASSERT_EQ(back.layers.size(), 2u);
  EXPECT_EQ(back.layers[1].inputs, std::vector<std::string>{"conv"});
}

TEST(OnnxExport, AddOfThreeBecomesSumAndComesBack) {
  Network net;
  net.input_shape = {2, 4, 4};
  for (const char* n : {"a", "b", "c"}) {
    Layer l;
    l.name = n;
    l.kind = LayerKind::Conv2d;
    l.inputs = {"input"};
    l.conv.out_channels = 2;
    net.add(l);
  }
  Layer add;
  add.name = "sum";
  add.kind = LayerKind::Add;
  add.inputs = {"a", "b", "c"};
  net.add(add);
  mixtd::net::init_random_weights(net, 1);
  const fs::path p = scratch("sum.onnx");
  save_onnx(net, p);
  EXPECT_EQ(read_model(p).graph().node(3).op_type(), "Sum");
  EXPECT_TRUE(load_onnx(p).same_weights(net));
}

// A linear layer straight on a Cx1x1 tensor: ONNX Gemm needs [N, C], so the
// export inserts a Flatten, which comes back as a layer of its own.
TEST(OnnxExport, LinearOnNchwGetsAFlatten) {
  Network net;
  net.input_shape = {3, 8, 8};
  Layer gap;
  gap.name = "gap";
  gap.kind = LayerKind::GlobalAvgPool;
  gap.inputs = {"input"};
  net.add(gap);
  Layer fc;
  fc.name = "fc";
  fc.kind = LayerKind::Linear;
  fc.inputs = {"gap"};
  fc.linear.out_features = 4;
  net.add(fc);
  mixtd::net::init_random_weights(net, 2);
  const fs::path p = scratch("gap-fc.onnx");
  save_onnx(net, p);
  const Network back = load_onnx(p);
  ASSERT_EQ(back.layers.size(), 3u);
  EXPECT_EQ(back.layers[1].kind, LayerKind::Flatten);
  EXPECT_EQ(back.layers[2].weight, net.layers[1].weight);
  EXPECT_EQ(back.layers[2].out_shape.c, 4);
}

TEST(OnnxExport, ShapeOnlyNetworkIsAnError) {
  const Network net = build_zoo("tiny");
  const fs::path p = scratch("no-weights.onnx");
  fs::remove(p);
  EXPECT_THAT(error_of([&] { save_onnx(net, p); }),
              AllOf(HasSubstr("no-weights.onnx"), HasSubstr("layer 'conv1' (conv2d) has no weights")));
  EXPECT_FALSE(fs::exists(p));
}

// ------------------------------------------------------------ PyTorch fixtures

nlohmann::json expected(const std::string& name) {
  std::ifstream in(fixture(name));
  EXPECT_TRUE(in) << fixture(name);
  return nlohmann::json::parse(in);
}

std::string chw(const nlohmann::json& j) {
  return std::to_string(j[0].get<long>()) + "x" + std::to_string(j[1].get<long>()) + "x" +
         std::to_string(j[2].get<long>());
}

void expect_close(const std::vector<float>& got, const nlohmann::json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want[i].get<double>();
    ASSERT_NEAR(got[i], w, 1e-6 + 1e-5 * std::abs(w)) << what << "[" << i << "]";
  }
}

// Every layer as PyTorch recorded it (gen-onnx-fixtures' Recorder): names,
// kinds, shapes, counts and (folded) weights.
void expect_matches_sidecar(const Network& net, const nlohmann::json& doc) {
  EXPECT_EQ(net.input_name, "input");
  EXPECT_EQ(net.input_shape.str(), chw(doc["input_shape"]));
  const auto& layers = doc["layers"];
  ASSERT_EQ(net.layers.size(), layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& w = layers[i];
    const Layer& l = net.layers[i];
    SCOPED_TRACE("layer " + std::to_string(i) + " '" + l.name + "'");
    EXPECT_EQ(l.name, w["name"].get<std::string>());
    EXPECT_EQ(to_string(l.kind), w["kind"].get<std::string>());
    EXPECT_EQ(l.in_shape.str(), chw(w["in"]));
    EXPECT_EQ(l.out_shape.str(), chw(w["out"]));
    const auto c = mixtd::net::counts(l);
    EXPECT_EQ(c.weights, w["weights"].get<long>());
    EXPECT_EQ(c.biases, w["biases"].get<long>());
    EXPECT_EQ(c.macs, w["macs"].get<long>());
    if (doc["params"].contains(l.name)) {
      expect_close(l.weight, doc["params"][l.name]["weight"], l.name + ".weight");
      expect_close(l.bias, doc["params"][l.name]["bias"], l.name + ".bias");
    }
  }
}

TEST(OnnxImport, PyTorchTinyFoldsBatchNormAndMatchesTorch) {
  const auto doc = expected("tiny.expected.json");
  // The export kept its BatchNormalization nodes (the script checks)...
  EXPECT_EQ(doc["onnx_batchnorm_nodes"].get<int>(), 3);
  const Network net = load_onnx(fixture("tiny.onnx"));
  // ...and the import folded every one into its conv.
  for (const auto& l : net.layers) EXPECT_NE(l.kind, LayerKind::BatchNorm) << l.name;
  expect_matches_sidecar(net, doc);
  EXPECT_EQ(net.name, "tiny");
  // A conv that had no bias gets the folded one.
  EXPECT_TRUE(net.find("conv1")->conv.bias);
  EXPECT_EQ(net.find("dw")->conv.groups, 8);
  // Residual add of conv3 and relu1, in torch's operand order.
  EXPECT_EQ(net.find("add")->inputs, (std::vector<std::string>{"conv3", "relu1"}));
  // AvgPool2d(3, 2, padding=1) is exported as Pad + AveragePool: one layer.
  const auto& pool = net.find("avgpool")->pool;
  EXPECT_EQ(pool.ph, 1);
  EXPECT_EQ(pool.pw, 1);
  EXPECT_TRUE(pool.count_include_pad);
  EXPECT_EQ(net.outputs(), std::vector<std::string>{"fc"});
}

TEST(OnnxImport, PyTorchReshapeMatMulAddIsOneLinear) {
  const auto doc = expected("matmul.expected.json");
  const Network net = load_onnx(fixture("matmul.onnx"));
  expect_matches_sidecar(net, doc);
  EXPECT_TRUE(net.find("matmul")->linear.bias);
  EXPECT_FALSE(net.find("pool")->pool.count_include_pad);
}

TEST(OnnxImport, ImportedPyTorchNetworkRoundTrips) {
  const Network net = load_onnx(fixture("tiny.onnx"));
  const fs::path p = scratch("tiny-torch-again.onnx");
  save_onnx(net, p);
  EXPECT_TRUE(load_onnx(p).same_weights(net));
}

// ------------------------------------------------------------ errors

TEST(OnnxImport, TruncatedFileIsNotAValidModel) {
  EXPECT_THAT(error_of([] { load_onnx(fixture("truncated.onnx")); }),
              AllOf(HasSubstr("truncated.onnx'"), HasSubstr("not a valid ONNX model")));
}

TEST(OnnxImport, TextAndEmptyFilesAreNotValidModels) {
  const fs::path text = scratch("text.onnx");
  std::ofstream(text) << "name: tiny\nlayers: []\n";
  EXPECT_THAT(error_of([&] { load_onnx(text); }), AllOf(HasSubstr("text.onnx'"), HasSubstr("not a valid ONNX model")));
  const fs::path empty = scratch("empty.onnx");
  std::ofstream{empty};
  EXPECT_THAT(error_of([&] { load_onnx(empty); }),
              AllOf(HasSubstr("empty.onnx'"), HasSubstr("not a valid ONNX model")));
  EXPECT_THAT(error_of([&] { load_onnx(scratch("does-not-exist.onnx")); }), HasSubstr("does-not-exist.onnx"));
}

TEST(OnnxImport, UnsupportedOpNamesNodeAndOp) {
  const std::string msg = error_of([] { load_onnx(fixture("unsupported.onnx")); });
  EXPECT_THAT(msg, HasSubstr("unsupported.onnx'"));
  EXPECT_THAT(msg, HasSubstr("node '/act/Sigmoid' has unsupported op 'Sigmoid'"));
  EXPECT_THAT(msg, HasSubstr("supported: Conv, BatchNormalization"));
}

// Mutations of a saved zoo `tiny`, each of which must be refused clearly.
class OnnxBadModel : public testing::Test {
 protected:
  void SetUp() override {
    save_onnx(build_zoo("tiny", true), scratch("tiny-base.onnx"));
    model = read_model(scratch("tiny-base.onnx"));
  }
  std::string load_error(const std::string& name) {
    const fs::path p = scratch(name);
    write_model(model, p);
    const std::string msg = error_of([&] { load_onnx(p); });
    EXPECT_THAT(msg, HasSubstr("'" + p.string() + "'"));
    return msg;
  }
  onnx::ModelProto model;
};

TEST_F(OnnxBadModel, AsymmetricPads) {
  auto* a = attr_named(node_named(model, "conv2"), "pads");
  a->clear_ints();
  for (int v : {1, 1, 0, 0}) a->add_ints(v);
  EXPECT_THAT(load_error("asym.onnx"),
              AllOf(HasSubstr("node 'conv2' (Conv)"), HasSubstr("pads [1, 1, 0, 0]"), HasSubstr("top == bottom")));
}

TEST_F(OnnxBadModel, Dilations) {
  auto* a = attr_named(node_named(model, "conv2"), "dilations");
  a->clear_ints();
  for (int v : {2, 2}) a->add_ints(v);
  EXPECT_THAT(load_error("dilated.onnx"),
              AllOf(HasSubstr("node 'conv2' (Conv)"), HasSubstr("dilations [2, 2]"), HasSubstr("legal: [1, 1]")));
}

TEST_F(OnnxBadModel, CeilMode) {
  attr_named(node_named(model, "pool1"), "ceil_mode")->set_i(1);
  EXPECT_THAT(load_error("ceil.onnx"), AllOf(HasSubstr("node 'pool1' (MaxPool)"), HasSubstr("ceil_mode = 1")));
}

TEST_F(OnnxBadModel, GemmAlpha) {
  attr_named(node_named(model, "fc"), "alpha")->set_f(0.5f);
  EXPECT_THAT(load_error("alpha.onnx"), AllOf(HasSubstr("node 'fc' (Gemm)"), HasSubstr("alpha = 0.5")));
}

TEST_F(OnnxBadModel, DoubleWeights) {
  auto* t = initializer_named(model, "conv1.weight");
  t->set_data_type(onnx::TensorProto::DOUBLE);
  EXPECT_THAT(load_error("double.onnx"),
              AllOf(HasSubstr("node 'conv1' (Conv)"), HasSubstr("initializer 'conv1.weight'"), HasSubstr("DOUBLE"),
                    HasSubstr("FLOAT")));
}

// Issue 24: a NaN or Inf weight is refused at import, naming the file, the
// initializer and the first bad index (it used to pass convert and solve).
TEST_F(OnnxBadModel, NonFiniteWeightsNameTheInitializerAndIndex) {
  const struct {
    const char* tensor;
    int index;
    float value;
    const char* shown;
  } cases[] = {
      {"conv2.weight", 17, NAN, "nan"}, {"conv1.bias", 3, INFINITY, "inf"}, {"fc.weight", 0, -INFINITY, "-inf"}};
  for (const auto& c : cases) {
    SetUp();
    auto* t = initializer_named(model, c.tensor);
    ASSERT_TRUE(t->has_raw_data()) << c.tensor;
    std::memcpy(t->mutable_raw_data()->data() + c.index * sizeof(float), &c.value, sizeof(float));
    EXPECT_THAT(load_error("nonfinite.onnx"),
                AllOf(HasSubstr(std::string("initializer '") + c.tensor + "'"),
                      HasSubstr("non-finite value at flat index " + std::to_string(c.index) + " (" + c.shown + ")")))
        << c.tensor;
  }
  // float_data (not raw_data) is checked the same way.
  SetUp();
  auto* t = initializer_named(model, "fc.bias");
  const std::string raw = t->raw_data();
  t->clear_raw_data();
  for (std::size_t k = 0; k < raw.size() / sizeof(float); ++k) t->add_float_data(k == 1 ? NAN : 0.5f);
  EXPECT_THAT(load_error("nonfinite-float-data.onnx"),
              AllOf(HasSubstr("initializer 'fc.bias'"), HasSubstr("flat index 1 (nan)")));
}

TEST_F(OnnxBadModel, WeightShapeMismatchNamesTheLayer) {
  // conv2 claims 4 input channels; its input conv1 has 8.
  auto* t = initializer_named(model, "conv2.weight");
  t->set_dims(1, 4);
  t->mutable_raw_data()->resize(t->raw_data().size() / 2);
  EXPECT_THAT(load_error("mismatch.onnx"), AllOf(HasSubstr("layer 'conv2' (conv2d)"), HasSubstr("expected 576")));
}

TEST_F(OnnxBadModel, AddOfAConstantNotAfterMatMul) {
  node_named(model, "add1")->set_input(1, "conv1.bias");
  EXPECT_THAT(load_error("addconst.onnx"),
              AllOf(HasSubstr("node 'add1' (Add)"), HasSubstr("constant 'conv1.bias'"), HasSubstr("MatMul")));
}

TEST_F(OnnxBadModel, IdentityAndDropoutAreSkipped) {
  // relu1 -> Identity -> Dropout -> conv2, as some exporters leave them.
  auto node = [](const char* op, const char* in, const char* out) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(out);
    n.add_input(in);
    n.add_output(out);
    return n;
  };
  auto* g = model.mutable_graph();
  std::vector<onnx::NodeProto> nodes(g->node().begin(), g->node().end());
  ASSERT_EQ(nodes[1].name(), "relu1");
  nodes.insert(nodes.begin() + 2, {node("Identity", "relu1", "relu1_id"), node("Dropout", "relu1_id", "relu1_drop")});
  g->clear_node();
  for (const auto& n : nodes) *g->add_node() = n;
  node_named(model, "conv2")->set_input(0, "relu1_drop");
  const fs::path p = scratch("identity.onnx");
  write_model(model, p);
  EXPECT_TRUE(load_onnx(p).same_weights(build_zoo("tiny", true)));
}

// fuzz_onnx: a node without outputs (here a Constant, first in the graph)
// read past the end of its output list; now one error naming the node.
TEST_F(OnnxBadModel, NodeWithoutOutputs) {
  auto* g = model.mutable_graph();
  onnx::NodeProto n;
  n.set_op_type("Constant");
  n.set_name("k");
  auto* a = n.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1.0f);
  g->mutable_node()->Add(std::move(n));
  g->mutable_node()->SwapElements(0, g->node_size() - 1);
  EXPECT_THAT(load_error("no-output.onnx"), AllOf(HasSubstr("node 'k' (Constant)"), HasSubstr("has no output")));
}

}  // namespace

#else  // MIXTD_ONNX_TORCHVISION

// torchvision.models.resnet18(weights=None), exported by torch 1.13 (eval
// mode, BatchNorm fused by the exporter): the zoo's resnet18 layer for layer.
TEST(OnnxTorchvision, Resnet18MatchesZoo) {
  const fs::path p = fs::path(MIXTD_BINARY_DIR) / "onnx-fixtures" / "resnet18.onnx";
  ASSERT_TRUE(fs::exists(p)) << p << " is generated by the ctest onnx_gen_torchvision_resnet18";
  const Network net = load_onnx(p);
  const Network zoo = build_zoo("resnet18");
  EXPECT_EQ(net.input_shape, zoo.input_shape);
  // The zoo uses torchvision's module names (BasicBlock ReLUs: relu, relu_1),
  // so the imported network matches it name for name as well.
  expect_same_layers(net, zoo, /*names=*/true);
  EXPECT_EQ(mixtd::net::counts(net).params, mixtd::net::counts(zoo).params);
  EXPECT_EQ(mixtd::net::counts(net).macs, mixtd::net::counts(zoo).macs);
}

#endif
