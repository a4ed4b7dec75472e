#include "DataOptions.h"

#include "mixtd/nn/Data.h"
#include "mixtd/support/Error.h"

namespace mixtd::cli {

void add_data_options(CLI::App* cmd, DataOptions& o, bool inputs) {
  cmd->add_option("--dataset", o.dataset,
                  std::string("calibrate the BFP8 exponents on this data set") +
                      (inputs ? " and stream its test images in" : "") + ": fmnist (default: seeded normal images)");
  o.data_dir = nn::kFmnistDir;
  cmd->add_option("--data-dir", o.data_dir, "folder of the data set's files")->capture_default_str();
  cmd->add_option("--calib", o.calib, "images calibrating the BFP8 exponents (as `mixtd accuracy --calib`)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{5000}));
  if (inputs)
    cmd->add_option("--first", o.first, "the first test image streamed in")
        ->capture_default_str()
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{9999}));
}

sim::FunctionalData load_data(const DataOptions& o, std::int64_t frames) {
  sim::FunctionalData data;
  if (o.dataset.empty()) return data;
  require(o.dataset == "fmnist", "unknown data set '" + o.dataset + "': legal is fmnist");
  const nn::FmnistSplit split = nn::load_fmnist(o.data_dir);
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
