// --dataset for the commands that carry data through the models (simulate
// --functional, gen-rtl, cosim): which images calibrate the BFP8 exponents
// and which are streamed in, so that a trained network is checked on the
// data it was trained for and its predictions can be compared with
// `mixtd accuracy`'s.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mixtd/sim/Functional.h"

namespace mixtd::cli {

struct DataOptions {
  std::string dataset;  // "" = seeded normal images
  std::string data_dir;
  std::int64_t calib = 16;  // as `mixtd accuracy --calib`
  std::int64_t first = 0;   // first test image streamed in
};

// Registers --dataset, --data-dir, --calib and --first on `cmd`; `inputs`:
// whether the command streams images (gen-rtl only calibrates).
void add_data_options(CLI::App* cmd, DataOptions& o, bool inputs);

// The images `o` names: calibration from the end of the search split (the
// images `mixtd accuracy --calib` uses), inputs the test images from
// `first` on, `frames` of them (0: none), with their labels. Empty if no
// --dataset. Throws mixtd::Error for an unknown data set or a range outside
// it, naming the legal values.
sim::FunctionalData load_data(const DataOptions& o, std::int64_t frames);

// One line: how many frames the model and the golden executor classified
// alike, and against the labels if known ("" if there are no top-1s).
std::string top1_summary(const std::string& model, const std::vector<std::int64_t>& top1,
                         const std::vector<std::int64_t>& golden, const std::vector<std::int64_t>& labels);

}  // namespace mixtd::cli
