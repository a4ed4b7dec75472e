#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "mixtd/net/Load.h"
#include "mixtd/net/WeightsFile.h"
#include "mixtd/net/Yaml.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace fs = std::filesystem;
using mixtd::net::parse_yaml;
using testing::AllOf;
using testing::HasSubstr;

namespace {

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("mixtd_yaml_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

class ZooRoundTrip : public testing::TestWithParam<const char*> {};

TEST_P(ZooRoundTrip, YamlWithWeightsIsIdentical) {
  const auto net = mixtd::net::build_zoo(GetParam(), true);
  const fs::path p = scratch_dir() / (std::string(GetParam()) + ".yaml");
  mixtd::net::save_yaml(net, p);
  const auto back = mixtd::net::load_network(p.string(), true);
  EXPECT_TRUE(back.same_structure(net));
  EXPECT_TRUE(back.same_weights(net));
  EXPECT_EQ(back.name, net.name);
  // Shape-only load of the same file.
  EXPECT_FALSE(mixtd::net::load_network(p.string(), false).has_weights());
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooRoundTrip,
                         testing::Values("tiny", "tiny-dw", "resnet18-fmnist:width=0.25", "repvgg-fmnist:width=0.25",
                                         "resnet18", "repvgg-a0"));

TEST(Yaml, ShapeOnlyVgg16RoundTrip) {
  const auto net = mixtd::net::build_zoo("vgg16");
  const auto back = parse_yaml(mixtd::net::to_yaml(net), "vgg16.yaml", ".");
  EXPECT_TRUE(back.same_structure(net));
}

std::string error_of(const std::string& text) {
  try {
    parse_yaml(text, "bad.yaml", ".");
  } catch (const mixtd::Error& e) {
    return e.what();
  }
  return "no error";
}

const char* kHeader =
    "network: t\n"
    "input: {shape: [3, 8, 8]}\n"
    "layers:\n";

TEST(YamlErrors, WrongType) {
  const std::string e =
      error_of(std::string(kHeader) + "  - {name: c1, kind: conv2d, input: input, out_channels: many, kernel: 3}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("layer 'c1'"));
  EXPECT_THAT(e, HasSubstr("'out_channels' must be an integer, got 'many'"));
}

TEST(YamlErrors, UnknownKindListsLegal) {
  const std::string e = error_of(std::string(kHeader) + "  - {name: c1, kind: conv3d, input: input}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("unknown kind 'conv3d'"));
  EXPECT_THAT(e, HasSubstr("conv2d"));
}

TEST(YamlErrors, MissingInput) {
  const std::string e = error_of(std::string(kHeader) + "  - {name: r, kind: relu}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("missing 'input'"));
}

TEST(YamlErrors, InputNamesNothing) {
  const std::string e = error_of(std::string(kHeader) + "  - {name: r, kind: relu, input: x}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("'x'"));
}

TEST(YamlErrors, ShapeMismatchGivesLayerLine) {
  const std::string e = error_of(std::string(kHeader) +
                                 "  - {name: a, kind: conv2d, input: input, out_channels: 4, kernel: 3, padding: 1}\n"
                                 "  - {name: b, kind: conv2d, input: input, out_channels: 4, kernel: 3}\n"
                                 "  - {name: s, kind: add, inputs: [a, b]}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:6:"));
  EXPECT_THAT(e, HasSubstr("layer 's'"));
  EXPECT_THAT(e, HasSubstr("4x6x6"));
}

TEST(YamlErrors, UnknownKey) {
  const std::string e =
      error_of(std::string(kHeader) + "  - {name: p, kind: maxpool, input: input, kernel: 2, dilation: 2}\n");
  EXPECT_THAT(e, HasSubstr("unknown key 'dilation'"));
  EXPECT_THAT(e, HasSubstr("legal:"));
}

TEST(YamlErrors, SyntaxErrorHasLine) {
  const std::string e = error_of("network: t\ninput: {shape: [3, 8, 8]\nlayers: []\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:"));
  EXPECT_THAT(e, HasSubstr("syntax"));
}

TEST(YamlErrors, MissingTopLevel) {
  EXPECT_THAT(error_of("network: t\nlayers: []\n"), HasSubstr("missing 'input'"));
  EXPECT_THAT(error_of("network: t\ninput: {shape: [3, 8]}\nlayers: []\n"), HasSubstr("[C, H, W]"));
  EXPECT_THAT(error_of("netwerk: t\n"), HasSubstr("unknown top-level key 'netwerk'"));
}

TEST(WeightsFile, CorruptAndMismatchedFilesAreRefused) {
  const auto net = mixtd::net::build_zoo("tiny", true);
  const fs::path p = scratch_dir() / "t.weights";
  mixtd::net::save_weights(net, p);
  auto shape_only = mixtd::net::build_zoo("tiny");
  mixtd::net::load_weights(shape_only, p);
  EXPECT_TRUE(shape_only.same_weights(net));

  std::string bytes = mixtd::read_file(p);
  bytes[bytes.size() / 2] ^= 0x55;
  mixtd::write_file_atomic(p, bytes);
  auto n2 = mixtd::net::build_zoo("tiny");
  try {
    mixtd::net::load_weights(n2, p);
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("corrupt"));
  }
  mixtd::write_file_atomic(p, std::string_view("not a weights file"));
  EXPECT_THROW(mixtd::net::load_weights(n2, p), mixtd::Error);

  // A wider network does not accept these weights.
  mixtd::net::save_weights(net, p);
  auto wide = mixtd::net::build_zoo("tiny:width=2");
  try {
    mixtd::net::load_weights(wide, p);
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("elements but layer"));
  }
}

// Issue 24: a key given twice is refused with both lines (yaml-cpp keeps
// both, so one of them was silently ignored).
TEST(YamlErrors, DuplicateKeysGiveBothLines) {
  EXPECT_THAT(error_of("network: t\nnetwork: u\ninput: {shape: [3, 8, 8]}\nlayers: []\n"),
              HasSubstr("bad.yaml:2: 'network' given twice (first at line 1)"));
  EXPECT_THAT(error_of(std::string(kHeader) + "  - {name: c1, kind: conv2d, input: input, out_channels: 4, kernel: 3,\n"
                                              "     out_channels: 8}\n"),
              HasSubstr("bad.yaml:5: 'out_channels' given twice (first at line 4)"));
  EXPECT_THAT(error_of("network: t\ninput: {shape: [3, 8, 8], shape: [3, 4, 4]}\nlayers: []\n"),
              HasSubstr("bad.yaml:2: 'shape' given twice (first at line 2)"));
  EXPECT_THAT(error_of(std::string(kHeader) + "  - {name: b, kind: batchnorm, input: input, eps: .nan}\n"),
              HasSubstr("bad.yaml:4: layer 'b': 'eps' must be a finite number, got '.nan'"));
}

// A NaN/Inf in a .weights sidecar is refused naming the file, the tensor and
// the index; so is a sidecar that is a directory.
TEST(WeightsFile, NonFiniteValuesAndDirectoriesAreRefused) {
  auto net = mixtd::net::build_zoo("tiny", true);
  net.find("conv2")->weight[5] = std::numeric_limits<float>::quiet_NaN();
  const fs::path p = scratch_dir() / "nan.weights";
  mixtd::net::save_weights(net, p);
  auto shape_only = mixtd::net::build_zoo("tiny");
  EXPECT_THAT(
      [&] { mixtd::net::load_weights(shape_only, p); },
      testing::ThrowsMessage<mixtd::Error>(AllOf(HasSubstr("'" + p.string() + "'"), HasSubstr("tensor 'conv2.weight'"),
                                                 HasSubstr("non-finite value at flat index 5 (nan)"))));
  const fs::path dir = scratch_dir() / "dir.weights";
  fs::create_directories(dir);
  EXPECT_THAT([&] { mixtd::net::load_weights(shape_only, dir); },
              testing::ThrowsMessage<mixtd::Error>(HasSubstr("'" + dir.string() + "': it is a directory")));
  // convert -o p1.yaml where p1.weights is a directory: the reason, not "Success".
  const fs::path yaml = scratch_dir() / "dir.yaml";
  EXPECT_THAT(
      [&] { mixtd::net::save_yaml(mixtd::net::build_zoo("tiny", true), yaml); },
      testing::ThrowsMessage<mixtd::Error>(AllOf(HasSubstr("cannot replace '" + dir.string() + "': it is a directory"),
                                                 testing::Not(HasSubstr("Success")))));
}

// Found by fuzz_network_yaml (fuzz/corpus/fuzz_network_yaml/regress-list-*):
// a list or mapping as a key made the reader's key.as<string>() throw an
// uncaught YAML::TypedBadConversion.
TEST(YamlErrors, AListOrMappingAsAKeyIsRefusedWithItsLine) {
  EXPECT_THAT(error_of("network: tiny\n[input]: 1\n"),
              HasSubstr("bad.yaml:2: a key must be a plain word, not a list or mapping"));
  EXPECT_THAT(error_of(std::string(kHeader) + "  - {name: c1, kind: relu, input: input, {a: 1}: 2}\n"),
              HasSubstr("bad.yaml:4: a key must be a plain word, not a list or mapping"));
}

// Found by fuzz_flow: a network name longer than the file system allows made
// the file-existence check throw std::filesystem::filesystem_error; it is an
// unknown network like any other.
TEST(Load, ANameTooLongForTheFileSystemIsAnUnknownNetwork) {
  const std::string name(300, 'n');
  EXPECT_THAT([&] { mixtd::net::load_network(name); },
              testing::ThrowsMessage<mixtd::Error>(AllOf(HasSubstr("'" + name + "'"), HasSubstr("tiny"))));
}

TEST(Load, UnknownFileType) {
  const fs::path p = scratch_dir() / "net.txt";
  mixtd::write_file_atomic(p, std::string_view("x"));
  EXPECT_THAT([&] { mixtd::net::load_network(p.string()); }, testing::ThrowsMessage<mixtd::Error>(HasSubstr(".txt")));
}

}  // namespace
