// design.yaml round trip, legal values and errors; devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

using namespace mixtd::arch;
using mixtd::td::Tau;
using mixtd::td::TdType;
using testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& n) {
  fs::path d = fs::temp_directory_path() / ("mixtd_arch_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / n;
}

std::string error_of(const std::string& text) {
  try {
    parse_design(text, "bad.yaml", ".");
  } catch (const mixtd::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Design, Divisors) {
  EXPECT_EQ(divisors(12), (std::vector<std::int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(9), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_EQ(divisors(1), (std::vector<std::int64_t>{1}));
}

TEST(Design, YamlRoundTrip) {
  Design d = make_design(mixtd::net::build_zoo("tiny:width=2"), "tiny:width=2", load_device("zcu102"), "zcu102");
  d.name = "rt";
  d.budget = 0.8;
  d.clock_mhz = 250;
  d.fifo_depth = 8;
  d.fifo_depths["conv1/stage0->add1"] = 300;
  d.layers["conv2"] = LayerMapping{Tau{TdType::SvdFilter, 2, 4, 8}, {Psi{1, 2, 3}, Psi{2, 8, 1}}};
  d.layers["conv4"] =
      LayerMapping{Tau{TdType::Cpd, 1, 1, 12}, {Psi{2, 4, 1}, Psi{4, 4, 3}, Psi{2, 2, 1}, Psi{4, 8, 1}}};
  d.layers["fc"].stages[0] = Psi{8, 5, 1};
  validate(d);
  const fs::path p = scratch("d.yaml");
  save_design(d, p);
  const Design back = load_design(p);
  EXPECT_EQ(back.name, "rt");
  EXPECT_EQ(back.network_spec, "tiny:width=2");
  EXPECT_EQ(back.device.name, "zcu102");
  EXPECT_EQ(back.budget, 0.8);
  EXPECT_EQ(back.clock_mhz, 250);
  EXPECT_EQ(back.fifo_depth, 8);
  EXPECT_EQ(back.fifo_depths, d.fifo_depths);
  EXPECT_EQ(back.layers, d.layers);
  EXPECT_EQ(to_yaml(back), to_yaml(d));  // deterministic text
}

// `factors:` is a path relative to the design file, emitted only when set.
TEST(Design, FactorsPathIsRelativeToTheDesignFile) {
  const fs::path dir = scratch("with-factors");
  fs::create_directories(dir / "ft");
  mixtd::write_file_atomic(dir / "ft/trained.factors", "any bytes: the design only names the file");
  Design d = make_design(mixtd::net::build_zoo("tiny"), "tiny", load_device("u250"), "u250");
  EXPECT_EQ(to_yaml(d).find("factors"), std::string::npos);
  d.factors_spec = "ft/trained.factors";
  save_design(d, dir / "d.yaml");
  const Design back = load_design(dir / "d.yaml");
  EXPECT_EQ(back.factors_spec, "ft/trained.factors");
  EXPECT_EQ(back.factors_path(), (dir / "ft/trained.factors").string());
  EXPECT_EQ(to_yaml(back), to_yaml(d));
  EXPECT_THAT(to_yaml(back), HasSubstr("\nfactors: ft/trained.factors\n"));
}

// What fine-tuning writes: the design on other weights, both files named
// relative to the new design's folder.
TEST(Design, SavedWithWeightsNamesBothFilesRelativeToItsFolder) {
  const fs::path onnx = fs::path(MIXTD_FIXTURES_DIR) / "tiny.onnx";
  const fs::path dir = scratch("with-weights");
  fs::create_directories(dir / "ft");
  fs::create_directories(dir / "out");
  mixtd::write_file_atomic(dir / "ft/tiny.factors", "named only");
  Design d = make_design(mixtd::net::load_network(onnx.string(), false), "elsewhere.onnx", load_device("u250"), "u250");
  save_design_with_weights(d, dir / "out/d.yaml", onnx, dir / "ft/tiny.factors");
  const Design back = load_design(dir / "out/d.yaml");
  EXPECT_EQ(back.factors_spec, "../ft/tiny.factors");
  EXPECT_EQ(fs::path(back.network_path()), onnx.lexically_normal());
  EXPECT_TRUE(back.network.same_structure(d.network));
  EXPECT_THROW(save_design_with_weights(d, dir / "x.yaml", dir / "net.bin", dir / "ft/tiny.factors"), mixtd::Error);
}

TEST(DesignErrors, AMissingFactorsFileNamesTheDesignAndThePath) {
  const std::string msg = error_of("design: mine\nnetwork: tiny\nfactors: nowhere/x.factors\ndevice: u250\n");
  EXPECT_THAT(msg, HasSubstr("bad.yaml:3: design 'mine': factors file 'nowhere/x.factors' not found"));
  EXPECT_THAT(error_of("network: tiny\nfactors: [a]\ndevice: u250\n"), HasSubstr("'factors' must be a string"));
}

// weight_memory: one kind per layer, one per stage, or left out (auto).
TEST(Design, YamlRoundTripWeightMemory) {
  Design d = make_design(mixtd::net::build_zoo("tiny:width=2"), "tiny:width=2", load_device("u250"), "u250");
  d.layers["conv1"].stages[0].weight_memory = WeightMemory::Uram;
  d.layers["conv2"] = LayerMapping{Tau{TdType::SvdFilter, 1, 1, 8},
                                   {Psi{1, 2, 3, WeightMemory::Bram}, Psi{2, 8, 1, WeightMemory::Uram}}};
  d.layers["conv4"] = LayerMapping{Tau{TdType::Cpd, 1, 1, 12},
                                   {Psi{2, 4, 1, WeightMemory::Uram}, Psi{4, 4, 3, WeightMemory::Uram},
                                    Psi{2, 2, 1, WeightMemory::Uram}, Psi{4, 8, 1, WeightMemory::Uram}}};
  validate(d);
  const std::string text = to_yaml(d);
  EXPECT_THAT(text, HasSubstr("conv1: {tau: none, stages: [[1, 1, 1]], weight_memory: uram}"));
  EXPECT_THAT(text, HasSubstr("weight_memory: [bram, uram]"));
  EXPECT_THAT(text, HasSubstr("[4, 8, 1]], weight_memory: uram}"));         // conv4: one kind for all four
  EXPECT_THAT(text, HasSubstr("conv3: {tau: none, stages: [[1, 1, 1]]}"));  // auto is left out
  const fs::path p = scratch("wm.yaml");
  save_design(d, p);
  const Design back = load_design(p);
  EXPECT_EQ(back.layers, d.layers);
  EXPECT_EQ(to_yaml(back), text);
}

// A design.yaml from before the choice: every weight memory auto.
TEST(Design, OldFilesLoadWithAutoWeightMemory) {
  const Design d = parse_design("network: tiny\ndevice: u250\nlayers:\n  conv2: {tau: none, stages: [[2, 4, 3]]}\n",
                                "old.yaml", ".");
  for (const auto& [name, m] : d.layers)
    for (const auto& p : m.stages) EXPECT_EQ(p.weight_memory, WeightMemory::Auto) << name;
  EXPECT_EQ(d.layers.at("conv2").stages[0], (Psi{2, 4, 3}));
}

const char* kHead = "network: tiny\ndevice: zcu102\n";

TEST(DesignErrors, IllegalWeightMemoryNamesTheLayerAndTheLegalKinds) {
  const std::string e = error_of(std::string(kHead) + "layers:\n  conv2: {tau: none, weight_memory: dram}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("layer 'conv2': weight_memory must be one of auto, bram, uram, got 'dram'"));
  const std::string per_stage = error_of(
      std::string(kHead) + "layers:\n  conv2: {tau: {type: svd-filter, rank: 2}, weight_memory: [bram, ram]}\n");
  EXPECT_THAT(per_stage, HasSubstr("layer 'conv2': stage 1: weight_memory must be one of auto, bram, uram, got 'ram'"));
  EXPECT_THAT(
      error_of(std::string(kHead) + "layers:\n  conv2: {tau: {type: cpd, rank: 4}, weight_memory: [bram, bram]}\n"),
      HasSubstr("'weight_memory' lists 2 kind(s) but cpd has 4 stage(s)"));
}

TEST(DesignErrors, UramOnADeviceWithoutUram) {
  // zcu102 has no URAM: uram is illegal there, and the message says what is legal.
  const std::string e = error_of(std::string(kHead) + "layers:\n  conv2: {tau: none, weight_memory: uram}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("layer 'conv2' stage 0 (conv): weight_memory = uram, but device 'zcu102' has no URAM"));
  EXPECT_THAT(e, HasSubstr("legal weight_memory: auto, bram"));
}

TEST(DesignErrors, IllegalPListsLegalValues) {
  const std::string e = error_of(std::string(kHead) + "layers:\n  conv2: {tau: none, stages: [[3, 1, 1]]}\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("layer 'conv2' stage 0 (conv): p_in = 3 does not divide its 8 input channels"));
  EXPECT_THAT(e, HasSubstr("legal p_in: 1, 2, 4, 8"));
  EXPECT_THAT(error_of(std::string(kHead) + "layers:\n  conv2: {tau: none, stages: [[1, 1, 2]]}\n"),
              HasSubstr("legal fine: 1, 3, 9"));
}

TEST(DesignErrors, WrongStageCount) {
  EXPECT_THAT(
      error_of(std::string(kHead) + "layers:\n  conv2: {tau: {type: cpd, rank: 4}, stages: [[1, 1, 1], [1, 1, 1]]}\n"),
      HasSubstr("cpd has 4 stage(s), got 2"));
}

TEST(DesignErrors, BadTauAndUnknownLayer) {
  EXPECT_THAT(error_of(std::string(kHead) + "layers:\n  conv2: {tau: {type: svd-filter, g1: 3, rank: 2}}\n"),
              HasSubstr("legal g1: 1, 2, 4, 8"));
  EXPECT_THAT(error_of(std::string(kHead) + "layers:\n  conv9: {tau: none}\n"), HasSubstr("no such layer"));
  EXPECT_THAT(error_of(std::string(kHead) + "layers:\n  relu1: {tau: none}\n"), HasSubstr("only conv2d and linear"));
  EXPECT_THAT(error_of(std::string(kHead) + "layers:\n  conv2: {tau: {type: tucker}}\n"),
              HasSubstr("unknown tau.type 'tucker'"));
}

TEST(DesignErrors, FifoDepthZero) {
  EXPECT_THAT(error_of(std::string(kHead) + "fifo_depth: 0\n"), HasSubstr("bad.yaml:3: 'fifo_depth' = 0: legal 1 .. "));
  EXPECT_THAT(error_of(std::string(kHead) + "fifo_depths: {a->b: 0}\n"),
              HasSubstr("bad.yaml:3: FIFO 'a->b' depth = 0: legal 1 .. "));
}

// Issue 24: every bad value is one line with the file, the line, the value
// and what would be legal — never a bad_alloc, a 4 GB simulation, "inf FPS"
// or RTL for a design that cannot exist.
TEST(DesignErrors, BoundsAndDuplicatesNameTheLineAndTheLegalValues) {
  // zcu102: 1824 BRAM18 of 18432 bits, no URAM; 8-bit words.
  const std::string cap = std::to_string(1824 * 18432 / 8);
  const struct {
    std::string yaml, message;
  } cases[] = {
      {"clock_mhz: 200\nclock_mhz: 300\n", "bad.yaml:4: 'clock_mhz' given twice (first at line 3)"},
      {"layers:\n  conv2: {tau: none}\n  conv2: {tau: none}\n", "bad.yaml:5: 'conv2' given twice (first at line 4)"},
      {"layers:\n  conv2: {tau: none, tau: none}\n", "bad.yaml:4: 'tau' given twice (first at line 4)"},
      {"fifo_depth: 99999999999999\n", "bad.yaml:3: 'fifo_depth' = 99999999999999: legal 1 .. " + cap + " beats"},
      {"fifo_depth: 2147483648\n", "'fifo_depth' = 2147483648: legal 1 .. " + cap + " beats (device 'zcu102'"},
      {"fifo_depth: 99999999999999999999999\n", "bad.yaml:3: 'fifo_depth' must be an integer"},
      {"fifo_depths: {host_in->conv1/stage0: 2147483648}\n",
       "bad.yaml:3: FIFO 'host_in->conv1/stage0' depth = 2147483648: legal 1 .. " + cap},
      {"fifo_depths: {conv1->nowhere: 8}\n", "bad.yaml:3: 'fifo_depths': no stream 'conv1->nowhere' in this design"},
      {"clock_mhz: 1e308\n", "bad.yaml:3: 'clock_mhz' = 1e308: legal 1 .. 1000 MHz"},
      {"clock_mhz: 0\n", "bad.yaml:3: 'clock_mhz' = 0: legal 1 .. 1000 MHz"},
      {"clock_mhz: 1e999\n", "bad.yaml:3: 'clock_mhz' must be a finite number, got '1e999'"},
      {"clock_mhz: .nan\n", "bad.yaml:3: 'clock_mhz' must be a finite number, got '.nan'"},
      {"clock_mhz: nan\n", "bad.yaml:3: 'clock_mhz' must be a finite number, got 'nan'"},
      {"budget: inf\n", "bad.yaml:3: 'budget' must be a finite number, got 'inf'"},
      {"budget: 1.5\n", "bad.yaml:3: 'budget' = 1.5: legal above 0 and at most 1"},
      {"bits: {weight: 0}\n", "bad.yaml:3: 'bits.weight' = 0: legal 1 .. 16 bits"},
      {"bits: {weight: 8, activation: 17}\n", "bad.yaml:3: 'bits.activation' = 17: legal 1 .. 16 bits"},
      {"bits: {weigth: 8}\n", "bad.yaml:3: unknown key 'weigth' in 'bits' (legal: weight, activation)"},
  };
  for (const auto& c : cases) EXPECT_THAT(error_of(std::string(kHead) + c.yaml), HasSubstr(c.message)) << c.yaml;
  // An unknown stream lists some real ones.
  EXPECT_THAT(error_of(std::string(kHead) + "fifo_depths: {conv1->nowhere: 8}\n"), HasSubstr("host_in->conv1/stage0"));
}

TEST(DesignErrors, AFifoWiderThanTheDeviceIsRefusedAtItsWidth) {
  // Deep enough for one word a beat, not for the stream's width.
  Design d = make_design(mixtd::net::build_zoo("tiny"), "tiny", load_device("zcu102"), "zcu102");
  const std::int64_t one_word = max_fifo_depth(d, 1);
  d.layers["conv1"].stages[0] = Psi{3, 8, 9};
  const fs::path p = scratch("wide.yaml");
  save_design(d, p);
  std::string text = mixtd::read_file(p);
  text += "fifo_depths: {conv1/stage0->conv2/stage0: " + std::to_string(one_word) + "}\n";
  const std::string e = error_of(text);
  EXPECT_THAT(e, HasSubstr("FIFO 'conv1/stage0->conv2/stage0' depth = " + std::to_string(one_word)));
  EXPECT_THAT(e, HasSubstr("so at most " + std::to_string(one_word / 8) + " beats fit in device 'zcu102'"));
  // validate() alone bounds every depth too (designs not read from a file).
  d.fifo_depth = one_word + 1;
  EXPECT_THAT([&] { validate(d); },
              testing::ThrowsMessage<mixtd::Error>(HasSubstr("legal 1 .. " + std::to_string(one_word))));
}

TEST(DesignErrors, MissingFieldsAndUnknownKeys) {
  EXPECT_THAT(error_of("device: u250\n"), HasSubstr("missing 'network'"));
  EXPECT_THAT(error_of("network: tiny\n"), HasSubstr("missing 'device'"));
  EXPECT_THAT(error_of(std::string(kHead) + "clok_mhz: 3\n"), HasSubstr("unknown key 'clok_mhz'"));
  EXPECT_THAT(error_of("network: tiny\ndevice: u251\n"), HasSubstr("unknown device 'u251'"));
  EXPECT_THAT(error_of(std::string(kHead) + "budget: 1.5\n"), HasSubstr("bad.yaml:3: 'budget' = 1.5: legal"));
}

// Found by fuzz_design (fuzz/corpus/fuzz_design/regress-map-as-key): `? ? `
// is a mapping used as a key, which escaped as a YAML::TypedBadConversion.
TEST(DesignErrors, AMappingAsAKeyIsRefusedWithItsLine) {
  EXPECT_THAT(error_of("? ? \n"), HasSubstr("bad.yaml:1: a key must be a plain word, not a list or mapping"));
  EXPECT_THAT(error_of(std::string(kHead) + "[fifo_depth]: 4\n"),
              HasSubstr("bad.yaml:3: a key must be a plain word, not a list or mapping"));
}

// Found by fuzz_device (fuzz/corpus/fuzz_device/regress-name-*): a list or
// mapping as the name, part or family escaped as a YAML::TypedBadConversion;
// and (fuzz_flow) a device name too long for the file system escaped the
// lookup as a std::filesystem::filesystem_error.
TEST(Device, ANameThatIsNotAWordOrTooLongIsRefused) {
  const std::string rest = "resources: {dsp: 1, bram18: 1, uram: 0, lut: 1, ff: 1}\nclock_mhz: 300\n";
  const struct {
    std::string yaml, message;
  } cases[] = {
      {"name: [a, b]\n" + rest, "x.yaml:1: 'name' must be a word, not a list or mapping"},
      {"name: x\npart: {a: 1}\n" + rest, "x.yaml:2: 'part' must be a word, not a list or mapping"},
      {"name: x\nfamily: [xcup]\n" + rest, "x.yaml:2: 'family' must be a word, not a list or mapping"},
  };
  for (const auto& c : cases)
    EXPECT_THAT([&] { parse_device(c.yaml, "x.yaml"); }, testing::ThrowsMessage<mixtd::Error>(HasSubstr(c.message)))
        << c.yaml;
  const std::string long_name(300, 'd');
  EXPECT_THAT([&] { load_device(long_name); },
              testing::ThrowsMessage<mixtd::Error>(HasSubstr("unknown device '" + long_name + "' (known: ")));
}

TEST(Device, FilesLoadAndMissingFieldsAreNamed) {
  const Device u = load_device("u250");
  EXPECT_EQ(u.capacity.dsp, 12288);
  EXPECT_EQ(u.capacity.bram18, 5376);
  EXPECT_EQ(u.capacity.uram, 1280);
  EXPECT_EQ(u.capacity.lut, 1728000);
  EXPECT_EQ(u.capacity.ff, 3456000);
  EXPECT_EQ(u.clock_mhz, 200);
  EXPECT_EQ(load_device("zc706").capacity.dsp, 900);
  try {
    parse_device("name: x\nresources: {dsp: 1, bram18: 1, uram: 0, lut: 1}\nclock_mhz: 100\n", "x.yaml");
    FAIL();
  } catch (const mixtd::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.yaml:2: device file is missing 'resources.ff'"));
  }
  EXPECT_THAT(
      [] { parse_device("name: x\nresources: {dsp: a, bram18: 1, uram: 0, lut: 1, ff: 1}\nclock_mhz: 1\n", "x.yaml"); },
      testing::ThrowsMessage<mixtd::Error>(HasSubstr("'resources.dsp' must be a number")));
  const struct {
    std::string yaml, message;
  } cases[] = {
      {"name: x\nname: y\n", "x.yaml:2: 'name' given twice (first at line 1)"},
      {"name: x\nresources: {dsp: 1, dsp: 2, bram18: 1, uram: 0, lut: 1, ff: 1}\nclock_mhz: 100\n",
       "x.yaml:2: 'dsp' given twice (first at line 2)"},
      {"name: x\nresources: {dsp: .inf, bram18: 1, uram: 0, lut: 1, ff: 1}\nclock_mhz: 100\n",
       "x.yaml:2: 'resources.dsp' must be a finite number, got .inf"},
      {"name: x\nresources: {dsp: 1, bram18: 1, uram: 0, lut: 1, ff: 1}\nclock_mhz: 1e308\n",
       "x.yaml:3: 'clock_mhz' = 1e308: legal 1 .. 1000 MHz"},
  };
  for (const auto& c : cases)
    EXPECT_THAT([&] { parse_device(c.yaml, "x.yaml"); }, testing::ThrowsMessage<mixtd::Error>(HasSubstr(c.message)))
        << c.yaml;
}

}  // namespace
