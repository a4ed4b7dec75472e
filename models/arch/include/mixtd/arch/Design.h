// The Design: everything that fixes one accelerator (SPEC "The flow").
//
//   network + per-layer τ + per-stage ψ = {p_in, p_out, fine} + FIFO depths
//   + device + clock + number widths
//
// design.yaml is the artefact every later tool reads and writes
// (docs/design-yaml.md). Every conv and linear layer has a LayerMapping; its
// `stages` has one ψ per stage of its τ (td::geometry), shared by all chunks
// of the layer (the chunks of a layer are identical engines).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/arch/Device.h"
#include "mixtd/net/Counts.h"
#include "mixtd/net/Network.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::arch {

// Where a stage's weight memory lives when it is large enough for block RAM
// (smaller ones are LUTRAM or registers whatever this says; Resources.h):
//   Auto  the kind that allocates fewer bits, BRAM18 on a tie (designs from
//         before the choice existed load with their old resources)
//   Bram  BRAM18
//   Uram  URAM288 (only on a device that has URAM)
// The solver chooses Bram or Uram explicitly for every block-RAM weight
// memory: on a tie — every memory wider than 72 bits — the bits do not say,
// what is left of each resource does.
enum class WeightMemory { Auto, Bram, Uram };

std::string_view to_string(WeightMemory m);
std::optional<WeightMemory> parse_weight_memory(std::string_view s);
inline constexpr std::string_view kWeightMemoryNames = "auto, bram, uram";

// ψ of one stage: its unroll factors and where its weights live. Legal:
// p_in | in_ch, p_out | out_ch, fine | kh·kw; a depthwise stage processes
// p_in channels at a time (p_out = p_in); weight_memory Uram only if the
// device has URAM.
struct Psi {
  std::int64_t p_in = 1, p_out = 1, fine = 1;
  WeightMemory weight_memory = WeightMemory::Auto;
  bool operator==(const Psi&) const = default;
};

struct LayerMapping {
  td::Tau tau;
  std::vector<Psi> stages;
  bool operator==(const LayerMapping&) const = default;
};

struct Design {
  std::string name = "design";
  std::string network_spec;  // zoo spec or path, as written in design.yaml
  // network_spec as a path from here (relative to the design file's folder
  // once loaded from one): where the weights are read from.
  std::string network_path() const { return network_file.empty() ? network_spec : network_file; }
  std::string network_file;  // set by load_design/parse_design; "" = network_spec
  net::Network network;      // loaded from network_spec, shapes inferred
  // Optional `factors:` (docs/design-yaml.md): the trained factors of the
  // decomposed layers (td::load_factors), which the data-carrying models use
  // instead of decomposing the network's weights again. "" = none.
  std::string factors_spec;  // the path as written in design.yaml
  std::string factors_file;  // set by load_design/parse_design; "" = factors_spec
  std::string factors_path() const { return factors_file.empty() ? factors_spec : factors_file; }
  std::string device_spec;  // device name or path
  Device device;
  double clock_mhz = 200.0;
  double budget = 0.9;  // fraction of the device the solver may use
  net::Bits bits;
  std::map<std::string, LayerMapping> layers;       // every conv2d and linear layer
  std::int64_t fifo_depth = 4;                      // default stream FIFO depth, in beats
  std::map<std::string, std::int64_t> fifo_depths;  // per-stream overrides (see Graph.h for names)

  // The stage shapes of a conv/linear layer under its τ.
  td::LayerGeometry geometry(const net::Layer& layer) const;
  const LayerMapping& mapping(const std::string& layer) const;
};

// A design with every layer undecomposed and ψ = 1 everywhere.
Design make_design(net::Network network, const std::string& network_spec, Device device,
                   const std::string& device_spec);

// Legal values, listing them in the error: p_in | in_ch, p_out | out_ch,
// fine | kh·kw, weight_memory uram only on a device with URAM, one ψ per
// stage, a mapping for every conv/linear layer, τ legal (td::check_tau),
// FIFO depths 1 .. max_fifo_depth(d, 1), clock_mhz 1 .. 1000, budget in
// (0, 1], bits 1 .. 16.
void validate(const Design& d);

// The deepest FIFO, in beats, a stream `width_words` words wide may have on
// d's device: its BRAM/URAM bits over the beat's bits (at least 1).
std::int64_t max_fifo_depth(const Design& d, std::int64_t width_words);

// Divisors of n, ascending: the legal unroll factors.
std::vector<std::int64_t> divisors(std::int64_t n);

// design.yaml. `base_dir` resolves relative network/device paths.
Design parse_design(const std::string& text, const std::string& source, const std::filesystem::path& base_dir);
Design load_design(const std::filesystem::path& path);
std::string to_yaml(const Design& d);
void save_design(const Design& d, const std::filesystem::path& path);

// `d` computing with fine-tuned weights: its τ and ψ, its network `network`
// (an .onnx or .yaml of the same structure) and its factors `factors`
// (td::save_factors), saved to `path` with both named relative to its
// folder (what `mixtd finetune --design-out`, the search and the flow write).
void save_design_with_weights(Design d, const std::filesystem::path& path, const std::filesystem::path& network,
                              const std::filesystem::path& factors);

}  // namespace mixtd::arch
