#include "DataOptions.h"

#include <iostream>

#include "CliChecks.h"
#include "mixtd/nn/Data.h"
#include "mixtd/support/Error.h"

namespace mixtd::cli {

void add_dataset_options(CLI::App* cmd, nn::DataConfig& c, const std::string& what) {
  cmd->add_option("--dataset", c.spec, what + ": " + nn::data_spec_help())->capture_default_str();
  cmd->add_option("--data-dir", c.fmnist_dir, "folder of Fashion-MNIST's gzipped IDX files (--dataset fmnist)")
      ->capture_default_str();
  cmd->add_option("--search-size", c.search_size,
                  "training images held out as the search set (default: 5000, at most a tenth of the training part)")
      ->check(in_range(std::int64_t{0}, std::int64_t{100000000}));
  cmd->add_option("--split-seed", c.seed, "seed of the search/train split")->capture_default_str();
  cmd->add_option("--mean", c.mean, "per-channel mean for cifar10/imagefolder (default: the data set's usual)")
      ->delimiter(',');
  cmd->add_option("--std", c.stddev, "per-channel standard deviation for cifar10/imagefolder")->delimiter(',');
  cmd->add_option("--resize", c.resize, "imagefolder: shorter side before the centre crop")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  cmd->add_option("--crop", c.crop, "imagefolder: centre crop (the network's input size)")
      ->capture_default_str()
      ->check(in_range(1, 4096));
  cmd->add_flag("--skip-bad-images", c.skip_bad,
                "imagefolder: skip images that do not decode (decodes all up front) instead of stopping");
  cmd->add_option("--decode-cache-mb", c.cache_mb, "imagefolder: MB of decoded, cropped images kept")
      ->capture_default_str()
      ->check(in_range(std::int64_t{0}, std::int64_t{1} << 20));
}

nn::DataSplit load_dataset(const nn::DataConfig& c, const net::Network& n, bool need_train,
                           const std::string& command) {
  nn::DataSplit s = nn::load_split(c);
  require(!need_train || s.has_train,
          "--dataset " + c.spec + " has no training part, and `mixtd " + command +
              "` needs one (npy:TRAIN_X,TRAIN_Y,TEST_X,TEST_Y, or imagefolder:DIR with DIR/train and DIR/val)");
  nn::require_fits(s.test, n);
  if (s.has_train) {
    nn::require_fits(s.search, n);
    nn::require_fits(s.train, n);
  }
  return s;
}

std::string data_settings(const nn::DataConfig& c) {
  const nn::DataConfig d;
  std::string s = c.spec == "fmnist" ? c.fmnist_dir : c.spec;
  if (c.search_size != d.search_size) s += " search-size=" + std::to_string(c.search_size);
  if (c.seed != d.seed) s += " split-seed=" + std::to_string(c.seed);
  auto list = [](const std::vector<float>& v) {
    std::string t;
    for (float x : v) t += (t.empty() ? "" : ",") + std::to_string(x);
    return t;
  };
  if (!c.mean.empty()) s += " mean=" + list(c.mean);
  if (!c.stddev.empty()) s += " std=" + list(c.stddev);
  if (c.spec.starts_with("imagefolder")) {
    s += " resize=" + std::to_string(c.resize) + " crop=" + std::to_string(c.crop);
    if (c.skip_bad) s += " skip-bad";
  }
  return s;
}

void add_data_options(CLI::App* cmd, DataOptions& o, bool inputs) {
  add_dataset_options(cmd, o.data,
                      std::string("calibrate the BFP8 exponents on this data set") +
                          (inputs ? " and stream its test images in" : "") + " (default: seeded normal images)");
  cmd->add_option("--calib", o.calib, "images calibrating the BFP8 exponents (as `mixtd accuracy --calib`)")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, std::int64_t{100000}));
  if (inputs)
    cmd->add_option("--first", o.first, "the first test image streamed in")
        ->capture_default_str()
        ->check(in_range(std::int64_t{0}, std::int64_t{100000000}));
}

sim::FunctionalData load_data(const DataOptions& o, const net::Network& n, std::int64_t frames) {
  sim::FunctionalData data;
  if (o.data.spec.empty()) return data;
  const nn::DataSplit split = load_dataset(o.data, n, false, "");
  require(o.calib >= 1 && o.calib <= split.search.size(),
          "--calib " + std::to_string(o.calib) + ": legal 1.." + std::to_string(split.search.size()));
  data.calibration = split.search.batch(split.search.size() - o.calib, o.calib);
  if (frames > 0) {
    require(o.first >= 0 && o.first + frames <= split.test.size(),
            "--first " + std::to_string(o.first) + " with " + std::to_string(frames) + " frames: the test set has " +
                std::to_string(split.test.size()) + " images (first + frames <= " + std::to_string(split.test.size()) +
                ")");
    data.inputs = split.test.batch(o.first, frames);
    data.labels = split.test.batch_labels(o.first, frames);
  }
  return data;
}

std::string top1_summary(const std::string& model, const std::vector<std::int64_t>& top1,
                         const std::vector<std::int64_t>& golden, const std::vector<std::int64_t>& labels) {
  if (top1.empty()) return "";
  std::size_t agree = 0, right = 0, golden_right = 0;
  for (std::size_t i = 0; i < top1.size(); ++i) {
    agree += i < golden.size() && golden[i] == top1[i];
    if (i < labels.size()) {
      right += top1[i] == labels[i];
      golden_right += i < golden.size() && golden[i] == labels[i];
    }
  }
  const std::string n = std::to_string(top1.size());
  std::string s = "top-1: " + model + " and golden agree on " + std::to_string(agree) + "/" + n + " frames";
  if (labels.size() >= top1.size())
    s += "; correct: " + model + " " + std::to_string(right) + "/" + n + ", golden " + std::to_string(golden_right) +
         "/" + n;
  return s + "\n";
}

}  // namespace mixtd::cli
