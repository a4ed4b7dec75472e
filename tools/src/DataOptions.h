// --dataset and its settings for every command that reads images
// (models/nn/DataSource.h: fmnist, npy, cifar10, imagefolder), and for the
// commands that carry data through the models (simulate --functional,
// gen-rtl, cosim): which images calibrate the BFP8 exponents and which are
// streamed in, so that a trained network is checked on the data it was
// trained for and its predictions can be compared with `mixtd accuracy`'s.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/net/Network.h"
#include "mixtd/nn/DataSource.h"
#include "mixtd/sim/Functional.h"

namespace mixtd::cli {

// Registers --dataset (default `c.spec`; "" = none), --data-dir,
// --search-size, --split-seed, --mean, --std, --resize, --crop,
// --skip-bad-images and --decode-cache-mb on `cmd`.
void add_dataset_options(CLI::App* cmd, nn::DataConfig& c, const std::string& what);

// Loads `c`'s data set and checks it fits `n` (input shape, label range).
// `need_train`: the command trains or searches, so a one-pool source is
// refused (naming the forms that carry a training part).
nn::DataSplit load_dataset(const nn::DataConfig& c, const net::Network& n, bool need_train, const std::string& command);

// What a search's results depend on in `c` (its checkpoint and query cache
// are keyed by it): Fashion-MNIST's folder for the default fmnist, else the
// spec and every non-default setting.
std::string data_settings(const nn::DataConfig& c);

inline nn::DataConfig no_dataset() {
  nn::DataConfig c;
  c.spec.clear();  // "" = seeded normal images
  return c;
}

struct DataOptions {
  nn::DataConfig data = no_dataset();
  std::int64_t calib = 16;  // as `mixtd accuracy --calib`
  std::int64_t first = 0;   // first test image streamed in
};

// Registers the data set options, --calib and --first on `cmd`; `inputs`:
// whether the command streams images (gen-rtl only calibrates).
void add_data_options(CLI::App* cmd, DataOptions& o, bool inputs);

// The images `o` names for network `n`: calibration from the end of the
// search split (the images `mixtd accuracy --calib` uses), inputs the test
// images from `first` on, `frames` of them (0: none), with their labels.
// Empty if no --dataset. Throws mixtd::Error for an unknown data set, data
// that does not fit `n`, or a range outside it, naming the legal values.
sim::FunctionalData load_data(const DataOptions& o, const net::Network& n, std::int64_t frames);

// One line: how many frames the model and the golden executor classified
// alike, and against the labels if known ("" if there are no top-1s).
std::string top1_summary(const std::string& model, const std::vector<std::int64_t>& top1,
                         const std::vector<std::int64_t>& golden, const std::vector<std::int64_t>& labels);

}  // namespace mixtd::cli
