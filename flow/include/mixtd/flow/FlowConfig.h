// FLOW.yaml (issue 23, docs/flow.md): what `mixtd flow` runs — the network
// and its weights, the data set, the device, the FPS target, the budget and
// each step's settings. Every key is checked on load: an unknown or
// repeated key, a wrong type, a number out of range, a missing file or an
// unknown device is one mixtd::Error "FILE:LINE: …" naming the key, the
// value and what would be legal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mixtd::flow {

struct SearchSettings {
  std::string oracle = "analytical";  // macs | analytical | forest | systemc
  std::string accuracy = "top1";      // top1 (needs a data set) | fidelity
  std::string types = "mixed";        // mixed | svd | cpd
  std::int64_t population = 25, mutations = 50, crossovers = 50;
  std::int64_t generations = 20, patience = 30;
  std::int64_t batch = 0;        // images per accuracy query (0: the search's default)
  std::int64_t search_size = 0;  // images carved from the training part for the search (0: the data set's default)
  double layer_drop = 1.0;
  std::uint64_t seed = 1;
  // The answer by fine-tuned validation top-1 (docs/search.md, "The
  // finalists"); unset: mixtd search's defaults.
  std::optional<std::int64_t> finalists, finalist_images;
};

struct FlowConfig {
  std::filesystem::path source;  // FLOW.yaml; every path in it is relative to its folder
  std::string name;
  std::string network;            // zoo spec or a path (resolved)
  std::string weights;            // .onnx (resolved), "" = the network's own
  std::int64_t train_epochs = 0;  // > 0: train the network first (it must not carry weights)
  double train_lr = 0.05;
  std::string dataset;  // a data set spec (docs/data.md), paths resolved; "" = none (accuracy: fidelity)
  std::string device;   // a name in configs/devices or a .yaml (resolved)
  double target_fps = 0;
  double budget = 0.9;
  SearchSettings search;
  std::int64_t finetune_epochs = 1, finetune_images = 0;  // 0: the whole training split
  double finetune_lr = 0.0005;
  std::int64_t simulate_frames = 3;
  std::int64_t cosim_frames = 2;
  std::string platform = "xilinx_u250_gen3x16_xdma_4_1_202210_1";
  double kernel_mhz = 0;  // 0: the design's clock
  std::int64_t package_frames = 16;
  std::int64_t jobs = 2;  // SystemC simulations and Verilator compiles at once

  // The settings in a fixed order, one per line: what a step's hash covers.
  std::string canonical() const;
};

FlowConfig load_flow(const std::filesystem::path& file);

// A commented FLOW.yaml that loads (the --help example).
std::string example_flow();

}  // namespace mixtd::flow
