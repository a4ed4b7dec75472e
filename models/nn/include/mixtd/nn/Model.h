// LibTorch networks built from a mixtd::net::Network (torch stays inside
// models/nn's .cpp files; this header has none of it).
//
//   float           every layer as itself (Conv2d incl. groups/depthwise,
//                   ReLU, pools, Add, Linear, Flatten; BatchNorm folded)
//   decomposed      each conv in `decomps` replaced by its stage chain,
//                   initialised from td::Decomposer's factors. All chunks of
//                   a stage run as one grouped conv: the input is permuted
//                   so group b (channels c ≡ b mod g2) is contiguous, stage 1
//                   has g2 groups, later stages g1·g2 groups (depthwise
//                   stages g1·g2·r), the g2 partials are summed and output
//                   group a (channels n ≡ a mod g1) is put back in natural
//                   order; the bias is added once.
//   BFP8 fake-quant given a numerics::QNetwork built by
//                   numerics::quantize_network from the same decompositions,
//                   every tensor is rounded as the golden executor does
//                   (Bfp8.h): weights per output channel of each stage
//                   factor (exponents recomputed from the current weights),
//                   activations per tensor at the QNetwork's calibrated
//                   exponents, biases at accumulator scale, round half up,
//                   saturation to ±127, fused ReLUs, Add at the common
//                   exponent, the fixed-point average. Gradients pass
//                   straight through the rounding (STE).
//
// Not modelled: requantiser shifts clamped to ±31 and biases saturating
// int32 (calibration keeps both out of reach in practice).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/nn/Data.h"
#include "mixtd/numerics/Quantized.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/td/Decompose.h"
#include "mixtd/td/Factors.h"
#include "mixtd/td/Tau.h"

namespace mixtd::nn {

// τ per conv layer; layers not named (or τ none) stay as they are.
using Taus = std::map<std::string, td::Tau>;

// One td::Decomposer per conv layer, kept alive so that a new τ for a layer
// reuses its cached SVDs. Holds a copy of the network.
class DecompositionCache {
 public:
  explicit DecompositionCache(net::Network net);
  ~DecompositionCache();
  // Decomposed layers for every decomposed τ. Throws mixtd::Error naming the
  // layer if it is not a conv of the network or τ does not fit it.
  numerics::Decompositions decompose(const Taus& taus);
  const net::Network& network() const { return net_; }

 private:
  net::Network net_;
  std::map<std::string, std::unique_ptr<td::Decomposer>> decomposers_;
};

struct ModelOptions {
  // A BatchNorm after every conv (for training from scratch; float,
  // undecomposed only). to_network() folds it.
  bool batchnorm = false;
};

// Per-output-channel mean and standard deviation of a conv layer's float
// output (bias included, before any ReLU), over images and positions.
struct ChannelStats {
  std::vector<double> mean, std;
};
using LayerStats = std::map<std::string, ChannelStats>;  // by conv layer

// y' = scale·y + shift per output channel of one decomposed layer.
struct ChannelCorrection {
  std::vector<double> scale, shift;
};
using Corrections = std::map<std::string, ChannelCorrection>;

// Statistics correction after decomposition (EagleEye's BN recalibration,
// for networks whose BatchNorms are folded): each decomposed layer's output
// is re-matched per channel to the undecomposed layer's statistics, its
// mean by a new bias (`bias`) or its mean and spread by a bias and a scale
// of the last stage's rows (`scale`). Layers are corrected in network order,
// each on the outputs of the corrected layers before it. Only weights and
// biases change, so every hardware model carries the result bit-exactly.
enum class StatsCorrection { None, Bias, Scale };
StatsCorrection parse_stats_correction(const std::string& s);  // "none" | "bias" | "scale"
std::string to_string(StatsCorrection c);

class Model;

// Knowledge distillation in Model::train: loss = (1 − alpha)·CE(labels) +
// alpha·T²·KL(softmax(teacher/T) ‖ softmax(student/T)) (Hinton et al.).
struct Distillation {
  Model* teacher = nullptr;  // float, undecomposed; none: plain CE
  double temperature = 4;
  double alpha = 0.9;
};

struct TrainOptions {
  std::int64_t epochs = 1;
  std::int64_t batch = 128;
  std::string optimizer = "sgd";    // sgd (momentum 0.9, Nesterov) | adam
  std::string schedule = "cosine";  // cosine | step (×0.1 at 50% and 75%) | constant
  double lr = 0.05;
  double weight_decay = 5e-4;
  bool flip = true;  // random horizontal flips (seeded)
  std::uint64_t seed = 0;
  int threads = 2;
  std::int64_t progress_every = 50;  // batches between progress lines (0: none)
  Distillation distill;
  std::filesystem::path checkpoint;  // written after every epoch if set
  bool resume = false;               // continue from `checkpoint`
  // Called after each epoch with (epoch 1.., mean train loss, train acc).
  std::function<void(std::int64_t, double, double)> on_epoch;
};

struct TrainResult {
  std::int64_t epochs_run = 0;
  double last_loss = 0, last_train_accuracy = 0;
  double seconds_per_epoch = 0;
};

class Model {
 public:
  // `net` needs weights. `decomps` (optional) replaces convs; `q` (optional)
  // switches on BFP8 fake-quant with its exponents; it must come from
  // quantize_network(net, *decomps, ...). Throws mixtd::Error naming the
  // layer on a mismatch.
  explicit Model(const net::Network& net, const numerics::Decompositions* decomps = nullptr,
                 const numerics::QNetwork* q = nullptr, ModelOptions options = {});
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  bool quantized() const;
  // The calibration maxima of numerics::run_float (its AbsMax keys) on `x`,
  // measured by this float model (not quantised, no BatchNorm).
  numerics::AbsMax calibration_stats(const numerics::FloatTensor& x);
  // Inference (eval mode, no gradients): logits [n, classes, 1, 1].
  numerics::FloatTensor forward(const numerics::FloatTensor& x);
  // Float model only: every conv layer's output statistics on `x`.
  LayerStats channel_stats(const numerics::FloatTensor& x);
  // Float model only: the corrections that re-match each decomposed layer's
  // output statistics on `x` to `target` (in network order, each measured
  // with the corrections before it applied); see StatsCorrection.
  Corrections statistics_corrections(const numerics::FloatTensor& x, const LayerStats& target, StatsCorrection mode);
  std::vector<std::int64_t> predict(const numerics::FloatTensor& x);
  // Top-1 accuracy on images [begin, begin + count) of `d`.
  double accuracy(const Dataset& d, std::int64_t begin = 0, std::int64_t count = -1, std::int64_t batch = 256);

  TrainResult train(const Dataset& data, const TrainOptions& options);

  // The float network with the current weights: BatchNorm folded,
  // decomposed layers reconstructed to dense weights (td::DecomposedLayer::reconstruct).
  net::Network to_network() const;
  // The decomposed layers with the current factor weights.
  numerics::Decompositions decompositions() const;
  // The BFP8 activation exponents the fake-quant runs at (fixed at
  // construction, kept through training); empty for a float model.
  numerics::ActivationExponents activation_exponents() const;
  std::int64_t parameter_count() const;

 private:
  friend struct ModelAccess;  // the oracle's prefix cache (Model.cpp)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// numerics::quantize_network with the calibration's float run in LibTorch
// (BM_Quantize: about 8x faster than the reference executor). The
// exponents are the reference's: LibTorch's sums differ from run_float's in
// the last bits, so when any maximum lies within kCalibrationMargin
// (relative) of an exponent boundary the reference executor calibrates
// instead (`exact_fallback` says so).
inline constexpr double kCalibrationMargin = 1e-4;
numerics::QNetwork quantize(const net::Network& net, const numerics::Decompositions& decomps,
                            const numerics::FloatTensor& calibration, bool* exact_fallback = nullptr);
// The same from maxima already measured on `calibration` by the LibTorch
// float model (Model::calibration_stats); `calibration` is for the fallback.
numerics::QNetwork quantize_from_stats(const net::Network& net, const numerics::Decompositions& decomps,
                                       const numerics::FloatTensor& calibration, const numerics::AbsMax& stats,
                                       bool* exact_fallback = nullptr);

// The corrections folded into the factors: the last stage's rows of output
// channel n scaled by scale[n] in every chunk, the bias set to
// scale·bias + shift (created when the layer had none).
void apply_corrections(numerics::Decompositions& decomps, const Corrections& corrections);

// What a query scores.
//   top1     top-1 against the labels
//   teacher  agreement with the undecomposed float network's soft outputs:
//            exp(−mean KL(p_teacher ‖ p_design)) in (0, 1], 1 when the
//            design's class probabilities equal the teacher's. Smooth: it
//            moves with every image, not only those whose argmax flips.
enum class Fitness { Top1, Teacher };
Fitness parse_fitness(const std::string& s);  // "top1" | "teacher"
std::string to_string(Fitness f);
// The search's defaults (`mixtd search`, `mixtd finetune`, `mixtd
// fitness-study`): the fixed evaluation set's size and the correction,
// chosen by the fitness study (docs/search.md).
inline constexpr std::int64_t kEvalImages = 1024;
inline constexpr StatsCorrection kSearchCorrection = StatsCorrection::Scale;

// exp(−mean over images of KL(softmax(teacher) ‖ softmax(student))).
double teacher_agreement(const numerics::FloatTensor& student_logits, const numerics::FloatTensor& teacher_logits);

// The accuracy oracle of the search: the decomposed BFP8 network on one
// batch of search images, scored by `fitness`.
struct OracleOptions {
  std::int64_t batch = 128;       // images per query
  std::int64_t calibration = 16;  // images calibrating the BFP8 exponents (search images, from the end)
  bool quantize = true;
  // Memory for the values at block boundaries of earlier queries, so that a
  // query whose first layers' τ match an earlier one's starts after them
  // (0: off). Answers are the same either way.
  std::int64_t prefix_cache_mb = 1024;
  Fitness fitness = Fitness::Top1;
  StatsCorrection correction = StatsCorrection::None;
  std::int64_t correction_images = 64;  // search images from the end (as calibration's)
};

// Values of networks at cuts between ops (block boundaries: one live
// tensor), kept under the τ of every conv before the cut and a tag naming
// the input batch: a run whose τ agree with an earlier one's up to a cut
// starts there (the pre-filter changes one layer; a mutation child keeps its
// parent's first layers). Exact: the ops after the cut run on the very
// tensors they would have computed. Least recently used entries leave once
// the cache holds more than its budget. Used by the oracles.
class PrefixCache {
 public:
  explicit PrefixCache(std::int64_t budget_mb);  // 0: off
  ~PrefixCache();
  // keys[c] names the τ of every conv before op c (c = 0..layers).
  static std::vector<std::string> keys(const net::Network& net, const Taus& taus);
  // m's output [n, classes, 1, 1] on x, x named by `tag` (same tag, same
  // images); with `stats`, m is the float model of a calibration run and
  // the maxima (Model::calibration_stats) are filled, the cached ones too.
  numerics::FloatTensor run(Model& m, const numerics::FloatTensor& x, const std::vector<std::string>& keys,
                            const std::string& tag, numerics::AbsMax* stats = nullptr);
  // What the oracles run: `net` with `decomps` (for `taus`) on batch x of
  // index `index`, in float, or in BFP8 calibrated on `calibration` (the
  // calibration run cached too) when that is given.
  numerics::FloatTensor forward(const net::Network& net, const numerics::Decompositions& decomps, const Taus& taus,
                                const numerics::FloatTensor& x, std::int64_t index,
                                const numerics::FloatTensor* calibration);
  void clear();                 // every entry (the counts stay)
  std::int64_t hits() const;    // runs that started after a cached cut
  std::int64_t misses() const;  // runs that started at the input

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The largest fixed evaluation set (the first images of a search split of
// `search_size`) that leaves the calibration and correction images at its
// other end apart from it.
std::int64_t largest_evaluation_set(std::int64_t search_size, const OracleOptions& o);

class AccuracyOracle {
 public:
  AccuracyOracle(net::Network net, Dataset search, OracleOptions options = {});
  // Sharing another oracle's decompositions (the same network, other options).
  AccuracyOracle(std::shared_ptr<DecompositionCache> cache, Dataset search, OracleOptions options = {});
  ~AccuracyOracle();
  struct Score {
    double fitness = 0, top1 = 0;
  };
  // The fitness (and top-1) on search batch `index` (images [index·batch,
  // (index+1)·batch)).
  Score score(const Taus& taus, std::int64_t index = 0);
  double query(const Taus& taus, std::int64_t index = 0) { return score(taus, index).fitness; }
  // The decomposed layers a query runs: td's factors, corrected as the
  // options say (what the hardware must carry to match the query).
  numerics::Decompositions decompose(const Taus& taus);
  // A design's own factors (its `factors:` file, fine-tuned or corrected):
  // from now on decompose() returns these, no decomposition and no
  // correction; a τ they do not hold is an error naming the layer. With
  // `exponents` (the file's), quantising uses them instead of calibrating.
  void set_factors(numerics::Decompositions factors, numerics::ActivationExponents exponents = {});
  // What the hardware must carry to compute what a query scores: the
  // decomposed layers (decompose()) and, when quantised, the activation
  // exponents the query ran at.
  td::Factors factors(const Taus& taus);
  // The model a query runs (decomposed, quantised unless options say not).
  Model build(const Taus& taus);
  // The undecomposed float network (the teacher).
  Model teacher();
  // The BFP8 network of these τ (calibrated as build() does).
  numerics::QNetwork quantize(const Taus& taus);
  // The same of decomposed layers already at hand (carried exponents, or calibrated).
  numerics::QNetwork quantize_decomposed(const numerics::Decompositions& d);
  DecompositionCache& cache() { return *cache_; }
  const std::shared_ptr<DecompositionCache>& shared_cache() const { return cache_; }
  const Dataset& search() const { return search_; }
  const OracleOptions& options() const { return options_; }
  // Runs that started after a cached prefix, and those that did not (a
  // quantised query is two runs: calibration and the batch).
  PrefixCache& prefix_cache() { return prefix_; }
  std::int64_t prefix_hits() const { return prefix_.hits(); }
  std::int64_t prefix_misses() const { return prefix_.misses(); }

 private:
  const numerics::FloatTensor& teacher_logits(std::int64_t index);

  std::shared_ptr<DecompositionCache> cache_;
  Dataset search_;
  OracleOptions options_;
  numerics::FloatTensor calib_, correction_images_;
  LayerStats teacher_stats_;  // of the correction images, once
  std::optional<numerics::Decompositions> factors_;
  numerics::ActivationExponents exponents_;  // with factors_: carried, not calibrated
  std::map<std::int64_t, numerics::FloatTensor> teacher_logits_;
  PrefixCache prefix_;
};

// The search's short fine-tune, one recipe for its answer and its
// finalists (so that what chose the answer is what the answer gets): Adam
// at `lr` on a cosine schedule, no weight decay, distillation from the
// undecomposed `teacher` ((1 − alpha)·CE + alpha·T²·KL; alpha 0: plain
// CE), on the first `images` of `train` (0: all; a DataSplit's train part
// is already in a seeded random order).
struct ShortFinetune {
  std::int64_t epochs = 1;
  std::int64_t images = 0;
  double lr = 5e-4;
  double alpha = 0.9, temperature = 4;
  std::uint64_t seed = 0;
  int threads = 2;
};
TrainResult short_finetune(Model& m, Model& teacher, const Dataset& train, const ShortFinetune& f);

// LibTorch's intra-op threads (torch::set_num_threads).
void set_threads(int threads);

// Top-1 of logits against labels.
double top1(const numerics::FloatTensor& logits, const std::vector<std::int64_t>& labels);
std::vector<std::int64_t> argmax(const numerics::FloatTensor& logits);

}  // namespace mixtd::nn
