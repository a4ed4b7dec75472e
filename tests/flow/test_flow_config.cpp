// FLOW.yaml (issue 23): every mistake is one line "FILE:LINE: …" naming the
// key and the value, and what would be legal; the shipped flows and the
// --help example load. The finetune step's final design names the factors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mixtd/arch/Design.h"
#include "mixtd/flow/FlowConfig.h"
#include "mixtd/flow/Runner.h"
#include "mixtd/flow/Steps.h"
#include "mixtd/net/Load.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;
namespace fs = std::filesystem;
using testing::HasSubstr;

fs::path dir() {
  const fs::path d = fs::temp_directory_path() / ("mixtd_flow_config_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::string& yaml) {
  const fs::path f = dir() / "flow.yaml";
  std::ofstream(f) << yaml;
  try {
    flow::load_flow(f);
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "(loaded)";
}

const std::string kBase = "network: tiny\ndevice: zc706\ntarget_fps: 1000\n";

TEST(FlowConfig, MistakesNameFileLineKeyAndValue) {
  EXPECT_THAT(error_of(kBase + "serach: {population: 3}\n"),
              HasSubstr("flow.yaml:4: unknown key 'serach' in the flow (legal: name, network,"));
  EXPECT_THAT(error_of(kBase + "search: {population: many}\n"),
              HasSubstr("flow.yaml:4: search.population must be an integer, got 'many'"));
  EXPECT_THAT(error_of(kBase + "search: {population: 1}\n"),
              HasSubstr("flow.yaml:4: search.population = 1: legal 2 .. 10000"));
  EXPECT_THAT(error_of(kBase + "search: {oracle: psychic}\n"),
              HasSubstr("search.oracle = 'psychic': legal macs | analytical | forest | systemc"));
  EXPECT_THAT(error_of("network: tiny\ndevice: zc706\ntarget_fps: [1]\n"),
              HasSubstr("flow.yaml:3: target_fps must be a number, got a list"));
  EXPECT_THAT(error_of("network: tiny\ndevice: zc706\ntarget_fps: 1e12\n"),
              HasSubstr("flow.yaml:3: target_fps = 1e12: legal"));
  EXPECT_THAT(error_of("network: tiny\ndevice: zc7060\ntarget_fps: 10\n"),
              HasSubstr("flow.yaml:2: device: unknown device 'zc7060'"));
  EXPECT_THAT(error_of(kBase + "weights: gone.onnx\n"), HasSubstr("flow.yaml:4: weights 'gone.onnx': no such file"));
  EXPECT_THAT(error_of("network: nets/none.onnx\ndevice: zc706\ntarget_fps: 10\n"),
              HasSubstr("flow.yaml:1: network 'nets/none.onnx': no such file"));
  EXPECT_THAT(error_of(kBase + "budget: 0.5\nbudget: 0.6\n"),
              HasSubstr("flow.yaml:5: 'budget' given twice in the flow"));
  EXPECT_THAT(error_of("network: tiny\ndevice: zc706\n"), HasSubstr("flow.yaml:1: missing 'target_fps'"));
  EXPECT_THAT(error_of(kBase + "search: {accuracy: top1}\n"), HasSubstr("search.accuracy top1 needs a 'dataset'"));
  EXPECT_THAT(error_of(kBase + "dataset: fmnist\ncosim: {frames: 2, stall: 0.1}\n"),
              HasSubstr("flow.yaml:5: unknown key 'stall' in cosim (legal: frames)"));
  EXPECT_THAT(error_of("- network\n"), HasSubstr("flow.yaml:1: a flow is a mapping"));
  EXPECT_THAT(error_of("network: [tiny\n"), HasSubstr("flow.yaml:"));
}

// Found by fuzz_flow (fuzz/corpus/fuzz_flow/regress-name-too-long): a
// device or file name longer than the file system allows made the existence
// checks throw std::filesystem::filesystem_error; each is "not found".
// The search's finalists: unset is mixtd search's default (and the hash
// says so), a value is passed on, fidelity (no data to fine-tune on) takes none.
TEST(FlowConfig, FinalistsAreTypedBoundedAndNeedData) {
  const fs::path f = dir() / "finalists.yaml";
  std::ofstream(f) << kBase << "search: {accuracy: fidelity}\n";
  const flow::FlowConfig unset = flow::load_flow(f);
  EXPECT_FALSE(unset.search.finalists);
  std::ofstream(f) << kBase << "search: {accuracy: fidelity, finalists: 0, finalist_images: 500}\n";
  const flow::FlowConfig set = flow::load_flow(f);
  EXPECT_EQ(set.search.finalists, 0);
  EXPECT_EQ(set.search.finalist_images, 500);
  EXPECT_NE(set.canonical(), unset.canonical());
  EXPECT_THAT(error_of(kBase + "search: {accuracy: fidelity, finalists: 4}\n"),
              HasSubstr("search.finalists 4: the finalists are fine-tuned on the dataset"));
  EXPECT_THAT(error_of(kBase + "search: {accuracy: fidelity, finalists: 1001}\n"), HasSubstr("search.finalists"));
  EXPECT_THAT(error_of(kBase + "search: {accuracy: fidelity, finalist_images: 0}\n"),
              HasSubstr("search.finalist_images"));
}

TEST(FlowConfig, NamesTooLongForTheFileSystemAreNotFound) {
  const std::string name(300, 'x');
  EXPECT_THAT(error_of("network: tiny\ndevice: " + name + "\ntarget_fps: 10\n"),
              HasSubstr("flow.yaml:2: device: unknown device '" + name + "'"));
  EXPECT_THAT(error_of(kBase + "weights: " + name + ".onnx\n"),
              HasSubstr("flow.yaml:4: weights '" + name + ".onnx': no such file"));
  EXPECT_THAT(error_of("network: " + name + ".yaml\ndevice: zc706\ntarget_fps: 10\n"),
              HasSubstr("flow.yaml:1: network '" + name + ".yaml': no such file"));
}

TEST(FlowConfig, ShippedFlowsAndTheHelpExampleLoad) {
  for (const auto& e : fs::directory_iterator(fs::path(MIXTD_SOURCE_DIR) / "configs/flows")) {
    const flow::FlowConfig c = flow::load_flow(e.path());
    EXPECT_FALSE(c.name.empty()) << e.path();
    EXPECT_EQ(flow::plan_steps(c).size() + 1, flow::step_names().size()) << e.path();
  }
  // The example names ../networks/…: put it where that resolves.
  const fs::path root = dir() / "example";
  fs::create_directories(root / "flows");
  fs::remove(root / "networks");
  fs::create_directory_symlink(fs::path(MIXTD_SOURCE_DIR) / "configs/networks", root / "networks");
  std::ofstream(root / "flows/example.yaml") << flow::example_flow();
  const flow::FlowConfig c = flow::load_flow(root / "flows/example.yaml");
  EXPECT_EQ(c.name, "my-flow");
  EXPECT_EQ(c.search.generations, 3);
}

TEST(FlowConfig, PathsAreRelativeToTheFlow) {
  const fs::path root = dir() / "rel";
  fs::create_directories(root / "sub");
  std::ofstream(root / "w.onnx") << "x";
  std::ofstream(root / "sub/flow.yaml") << kBase << "weights: ../w.onnx\ndataset: npy:../x.npy,../y.npy\n";
  const flow::FlowConfig c = flow::load_flow(root / "sub/flow.yaml");
  EXPECT_EQ(c.weights, (root / "w.onnx").lexically_normal().string());
  EXPECT_EQ(c.dataset,
            "npy:" + (root / "x.npy").lexically_normal().string() + "," + (root / "y.npy").lexically_normal().string());
  fs::remove_all(dir());
}

// The steps run in the output folder, so a flow named by a relative path
// (`mixtd flow configs/flows/demo-fmnist.yaml`, as README and --help type
// it) must still give its steps paths that resolve there: absolute ones.
TEST(FlowConfig, PathsOfAFlowNamedRelativelyAreAbsolute) {
  const fs::path root = dir() / "relcwd";
  fs::create_directories(root / "sub");
  std::ofstream(root / "w.onnx") << "x";
  std::ofstream(root / "sub/flow.yaml") << kBase << "weights: ../w.onnx\ndataset: npy:../x.npy,../y.npy\n";
  struct Cwd {  // back where it was, however the test ends
    fs::path was = fs::current_path();
    ~Cwd() { fs::current_path(was); }
  } cwd;
  fs::current_path(root);
  const flow::FlowConfig c = flow::load_flow("sub/flow.yaml");
  const fs::path abs = fs::absolute(root).lexically_normal();
  EXPECT_EQ(fs::path(c.weights), abs / "w.onnx");
  EXPECT_EQ(c.dataset, "npy:" + (abs / "x.npy").string() + "," + (abs / "y.npy").string());
  fs::remove_all(dir());
}

// A fine-tuning flow's final design names the trained factors as well as
// the fine-tuned network, and the steps that read it hash both contents.
TEST(FlowSteps, TheFinalDesignNamesTheFineTunedFactors) {
  flow::FlowConfig c;
  c.network = "tiny";
  c.device = "zc706";
  c.dataset = "fmnist";
  c.finetune_epochs = 1;
  const auto steps = flow::plan_steps(c);
  const flow::Step& ft = steps.at(2);
  ASSERT_EQ(ft.name, "finetune");
  const auto& args = ft.commands.at(0).args;
  const auto at = std::find(args.begin(), args.end(), "--factors");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "finetune/finetuned.factors");
  EXPECT_NE(std::find(ft.outputs.begin(), ft.outputs.end(), "finetune/finetuned.factors"), ft.outputs.end());
  EXPECT_EQ(steps.at(3).products, (std::vector<std::string>{"finetune/finetuned.onnx", "finetune/finetuned.factors"}));

  // The in-process command on a flow folder where search and fine-tuning ran.
  const fs::path root = dir() / "final";
  fs::create_directories(root / "search");
  fs::create_directories(root / "finetune");
  const fs::path onnx = fs::path(MIXTD_FIXTURES_DIR) / "tiny.onnx";
  fs::copy_file(onnx, root / "finetune/finetuned.onnx", fs::copy_options::overwrite_existing);
  std::ofstream(root / "finetune/finetuned.factors") << "named only";
  arch::Design best =
      arch::make_design(net::load_network(onnx.string(), false), onnx.string(), arch::load_device("zc706"), "zc706");
  arch::save_design(best, root / "search/best.yaml");
  const auto write = std::find_if(ft.commands.begin(), ft.commands.end(), [](auto& k) { return bool(k.in_process); });
  ASSERT_NE(write, ft.commands.end());
  write->in_process(root);
  const arch::Design final_design = arch::load_design(root / flow::kFinalDesign);
  EXPECT_EQ(final_design.network_spec, "finetuned.onnx");
  EXPECT_EQ(final_design.factors_spec, "finetuned.factors");
  fs::remove_all(dir());
}

// A step's `products` (earlier steps' artefacts) are in its hash: when one
// changes while the step that wrote it keeps its hash (as a --force rerun
// of a fine-tune may), the step reruns; unchanged, it does not.
TEST(FlowSteps, AStepRerunsWhenAnEarlierArtefactItHashesChanges) {
  const fs::path root = dir() / "products";
  int writes = 0, reads = 0;
  flow::Step a, b;
  a.name = "a";
  a.commands.push_back({});
  a.commands[0].tag = "write a/x.txt";
  a.commands[0].in_process = [&](const fs::path& d) {
    ++writes;
    std::ofstream(d / "a/x.txt") << "trained";
  };
  a.outputs = {"a/x.txt"};
  b.name = "b";
  b.commands.push_back({});
  b.commands[0].tag = "read a/x.txt";
  b.commands[0].in_process = [&](const fs::path&) { ++reads; };
  b.products = {"a/x.txt"};
  flow::RunOptions o;
  o.dir = root;
  std::ostringstream out;
  flow::run_steps({a, b}, o, out);
  flow::run_steps({a, b}, o, out);
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(reads, 1);
  std::ofstream(root / "a/x.txt") << "trained again, otherwise";
  flow::run_steps({a, b}, o, out);
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(reads, 2);
  fs::remove_all(dir());
}

// Without fine-tuning the final design is best.yaml as it is: no factors.
TEST(FlowSteps, WithoutFineTuningNoFactorsAreNamedOrHashed) {
  flow::FlowConfig c;
  c.network = "tiny";
  c.device = "zc706";
  const auto steps = flow::plan_steps(c);
  EXPECT_TRUE(steps.at(3).products.empty());
  for (const auto& k : steps.at(2).commands)
    EXPECT_EQ(std::find(k.args.begin(), k.args.end(), "--factors"), k.args.end());
}

}  // namespace
