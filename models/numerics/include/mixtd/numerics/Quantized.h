// A network in BFP8: what the hardware computes, layer by layer.
//
// quantize_network() turns a float network (with its decomposed layers) and
// a calibration batch into a QNetwork: int8 weights with per-output-channel
// exponents, per-tensor activation exponents, int32 biases and the
// requantiser parameters of every stage. The golden executor (Golden.h), the
// SystemC model and the RTL all run a QNetwork.
//
// Structure per conv layer (SPEC "The accelerator"): chunk (a, b) is a chain
// of stages reading input group b. When g2 = 1 the last stage of chunk a
// adds the bias, applies the fused ReLU and produces output group a at the
// layer's exponent. When g2 > 1 every chunk's last stage produces a partial
// at the layer's partial exponent (no bias, no ReLU) and the group add sums
// the g2 partials of each output channel in int32, adds the bias and
// requantises (with the fused ReLU).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::numerics {

struct QStage {
  td::StageShape shape;
  std::vector<std::int8_t> weight;  // [out, in (1 if depthwise), kh, kw]
  std::vector<int> weight_exp;      // [out]
  int in_exp = 0;
  int out_exp = 0;
  std::vector<Requant> requant;  // [out]: bias (accumulator scale), shift, relu
};

enum class QKind { Conv, Linear, Add, MaxPool, AvgPool, GlobalAvgPool, ReLU, Flatten, Identity };

struct QLayer {
  std::string name;
  QKind kind = QKind::Identity;
  std::vector<std::string> inputs;
  net::Shape in_shape, out_shape;
  std::vector<int> in_exps;  // one per input
  int out_exp = 0;
  bool relu = false;  // fused (Conv, Linear, Add)

  // Conv / Linear (Linear: one 1x1 stage over the flattened C·H·W input).
  td::Tau tau;
  std::vector<std::vector<QStage>> chunks;  // index a * g2 + b
  int partial_exp = 0;                      // g2 > 1
  std::vector<Requant> group_add;           // g2 > 1: [N] bias at partial scale, shift, relu

  // Pools.
  net::PoolAttrs pool;

  // Add: requantiser after exponent alignment to min(in_exps).
  Requant add_requant;
};

struct QNetwork {
  std::string name;
  std::string input_name = "input";
  net::Shape input_shape;
  int input_exp = 0;
  std::vector<QLayer> layers;
  std::string output;
};

struct QuantizeOptions {
  // A ReLU whose producer (conv, linear, add) feeds only it is fused into
  // the producer's requantiser, as the hardware does.
  bool fuse_relu = true;
};

// Calibrates exponents on `calibration` (a batch of float images) and
// quantises. `decomps` gives the decomposed conv layers (others run whole).
QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const FloatTensor& calibration,
                          const QuantizeOptions& options = {});

// The same from calibration statistics already measured (run_float's
// AbsMax keys), so that a faster executor may measure them; the exponents
// are block_exponent of each maximum, as above.
QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const AbsMax& stats,
                          const QuantizeOptions& options = {});

// The activation exponents of a BFP8 network by tensor, under AbsMax's
// keys ("<input>", "<layer>" — the fused ReLU's name when one is fused —,
// "<layer>#stage<k>", "<layer>#partial"): what a fine-tune trained at and
// a factors file carries (td::ActivationExponents is the same type), so
// that the hardware models compute at them instead of calibrating anew.
using ActivationExponents = std::map<std::string, int>;

// Quantises at these exponents: every tensor the network quantises must
// have one and no other may (an Error names the first missing or extra).
QNetwork quantize_network(const net::Network& net, const Decompositions& decomps, const ActivationExponents& exponents,
                          const QuantizeOptions& options = {});

// The exponents `q` (quantize_network of `net`) computes at; quantising
// again at them gives `q` back.
ActivationExponents activation_exponents(const net::Network& net, const QNetwork& q,
                                         const QuantizeOptions& options = {});

// Per-tensor quantisation of a float batch at exponent e.
Int8Tensor quantize_tensor(const FloatTensor& x, int e);
FloatTensor dequantize_tensor(const Int8Tensor& x, int e);

// Weight quantisation per output channel: fills weight and weight_exp.
void quantize_weights(const std::vector<float>& w, std::int64_t out_ch, std::vector<std::int8_t>& q,
                      std::vector<int>& exps);

}  // namespace mixtd::numerics
