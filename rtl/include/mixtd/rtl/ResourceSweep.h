// The yosys resource sweep of rtl/lib and the analytical model beside it
// (docs/rtl-resources.md):
//
//  * resource_sweep_grid: the seeded parameter sets, one instance of a
//    module each, written by `mixtd resources grid` for scripts/yosys-sweep;
//  * read_yosys_table: the CSV the sweep writes (docs/rtl-resources.csv);
//  * model_of: what the analytical model (arch, the functions build_graph
//    and the solver call) says the same instance costs, its logic split from
//    its memories;
//  * fit_logic: the LUT/FF coefficients of a block kind refitted to the
//    table (weighted least squares on relative error).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mixtd/arch/Device.h"
#include "mixtd/arch/Resources.h"

namespace mixtd::rtl {

struct SweepPoint {
  std::string name;    // "stage_03"
  std::string module;  // "mixtd_conv_stage"
  std::vector<std::pair<std::string, std::int64_t>> params;
  // Memory images the sweep fills with seeded random words: the parameter
  // naming the file, depth (lines) and width (bits) of one line.
  struct Image {
    std::string param;
    std::int64_t depth = 0, width_bits = 0;
  };
  std::vector<Image> images;

  std::int64_t param(const std::string& key) const;  // throws naming the point
};

std::vector<SweepPoint> resource_sweep_grid();
// One line per point: `name module K=V ... [@PARAM:depth:width ...]`.
std::string sweep_grid_text(const std::vector<SweepPoint>& grid);

// One row of the yosys table.
struct YosysRow {
  SweepPoint point;  // no images
  double lut = 0, ff = 0, dsp = 0, bram18 = 0, uram = 0;
};
// The CSV scripts/yosys-sweep writes — the sweep's, or a design's
// (--design: one row per distinct block; memory images and Verilog
// constants skipped, two rtl/lib hashes refused); errors
// name the file and line.
std::vector<YosysRow> read_yosys_table(const std::string& path);

struct ModelOfPoint {
  arch::LogicBlock block = arch::LogicBlock::Host;
  arch::LogicFeatures features{};
  arch::Resources memory;  // line buffers, weights, FIFO storage, DSPs
  arch::Resources total;   // memory + the block's logic at the committed coefficients
};
// The analytical model of one sweep point (8-bit weights and activations,
// a device with URAM). Throws for a module the model has no block for.
ModelOfPoint model_of(const SweepPoint& p);

// Coefficients minimising Σ ((yosys − model) / max(yosys, 16))² over `rows`
// of one block kind, for LUT and FF separately; features that are constant
// over the rows beyond the intercept get 0, and so do features whose
// coefficient would be negative (dropped one at a time, most negative
// first, and the rest refitted: no block gets cheaper as it grows). Rounded
// to 0.01.
arch::LogicCoefficients fit_logic(arch::LogicBlock block, const std::vector<YosysRow>& rows);

// Relative error (model − yosys) / yosys of one quantity.
struct ErrorSummary {
  int rows = 0;
  double mean_abs = 0, max_abs = 0;  // fractions
};
struct BlockErrors {
  ErrorSummary lut, ff;
};
BlockErrors model_errors(arch::LogicBlock block, const std::vector<YosysRow>& rows, const arch::LogicCoefficients& c);

}  // namespace mixtd::rtl
