// mixtd resources — the analytical model's LUT/FF beside yosys synthesis of
// rtl/lib (docs/rtl-resources.md). `grid` prints the sweep's parameter sets
// for scripts/yosys-sweep; `fit` compares the committed coefficients with a
// yosys table and refits them; `model` prints a design's resources per block
// as gen-rtl instantiates them (scripts/yosys-sweep --design reads its JSON).
#include <iomanip>
#include <iostream>
#include <sstream>

#include "Commands.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/rtl/DesignResources.h"
#include "mixtd/rtl/ResourceSweep.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

std::string pct(double f) { return fixed(100.0 * f, 1) + "%"; }

std::string coefficients_text(const arch::LogicCoefficients& c) {
  std::ostringstream os;
  const auto list = [&](const arch::LogicFeatures& f) {
    os << '{';
    for (int i = 0; i < arch::kLogicFeatures; ++i) os << (i ? ", " : "") << f[static_cast<std::size_t>(i)];
    os << '}';
  };
  os << '{';
  list(c.lut);
  os << ", ";
  list(c.ff);
  os << '}';
  return os.str();
}

}  // namespace

Run add_resources(CLI::App& app) {
  auto* cmd = app.add_subcommand("resources", "the LUT/FF model beside yosys synthesis of rtl/lib");
  cmd->require_subcommand(1);
  auto* grid = cmd->add_subcommand("grid", "print the sweep's parameter sets (input of scripts/yosys-sweep)");
  auto* fit = cmd->add_subcommand("fit", "compare the model with a yosys table and refit its LUT/FF coefficients");
  auto table = std::make_shared<std::vector<std::string>>();
  fit->add_option("TABLE", *table,
                  "CSVs scripts/yosys-sweep writes: the sweep's (docs/rtl-resources.csv) and designs' "
                  "(D-rtl/yosys-blocks.csv, one row per distinct block)")
      ->required()
      ->check(CLI::ExistingFile);
  auto rows_out = std::make_shared<std::string>();
  fit->add_option("--rows", *rows_out,
                  "also write every row the fit reads as CSV: its block, parameters, features, the model's "
                  "memory LUT/FF and yosys's LUT/FF");
  auto* model = cmd->add_subcommand("model", "a design's resources per block, as gen-rtl instantiates them");
  auto design = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  model->add_option("DESIGN", *design, "a design.yaml (written by `mixtd solve`)")
      ->required()
      ->check(CLI::ExistingFile);
  model->add_flag("--json", *json, "JSON for scripts/yosys-sweep --design (instance names of mixtd_top.sv)");
  model->footer(
      "One row per graph module (its instances u_<name>[_i] in mixtd_top.sv), per stream (its\n"
      "mixtd_stream_fifo instances q<stream>_<e>) and per stream whose consumer reads another width\n"
      "(its mixtd_repack instances); the rows sum to `mixtd report`'s\n"
      "total.\n\n"
      "Examples:\n"
      "  mixtd solve tiny --device zc706 -o t.yaml\n"
      "  mixtd resources model t.yaml\n"
      "  mixtd resources model t.yaml --json\n"
      "  scripts/yosys-sweep --design t.yaml        # yosys on every block, beside these figures");
  cmd->footer(
      "Examples:\n"
      "  mixtd resources grid                      # one line per module instance to synthesise\n"
      "  scripts/yosys-sweep                       # runs yosys on each, writes docs/rtl-resources.csv\n"
      "  mixtd resources fit docs/rtl-resources.csv\n"
      "  mixtd resources fit docs/rtl-resources.csv docs/rtl-resources-resnet18-u250.csv \\\n"
      "      docs/rtl-resources-resnet18-zc706.csv --rows rows.csv   # the committed fit\n"
      "  mixtd resources model t.yaml --json       # a design's blocks (scripts/yosys-sweep --design t.yaml)\n\n"
      "fit prints, per block kind, the relative error |model - yosys| / yosys of LUT and FF with the\n"
      "committed coefficients and with the refitted ones, and the refitted table in the form of\n"
      "models/arch/src/LogicCoefficients.cpp (the committed table is this fit: paste it there after a\n"
      "new sweep or a changed memory rule). Memories (line buffers, weights, FIFOs) are placed as yosys\n"
      "places them (Resources.h) and are not fitted; the DSP and BRAM columns are printed for comparison.");
  return [grid, model, design, json, table, rows_out] {
    if (grid->parsed()) {
      std::cout << rtl::sweep_grid_text(rtl::resource_sweep_grid());
      return 0;
    }
    if (model->parsed()) {
      const auto r = rtl::design_resources(arch::load_design(*design));
      if (*json) {
        std::cout << rtl::to_json(r).dump(1) << "\n";
        return 0;
      }
      Table t;
      for (const char* c : {"block", "kind", "module"}) t.add_column(c, Table::Align::Left);
      for (const char* c : {"count", "LUT", "FF", "DSP", "BRAM18", "URAM"}) t.add_column(c);
      for (const auto& row : r.rows)
        t.add_row({row.name, row.kind, row.module.empty() ? "-" : row.module, std::to_string(row.count),
                   fixed(row.total.lut, 0), fixed(row.total.ff, 0), fixed(row.total.dsp, 0), fixed(row.total.bram18, 0),
                   fixed(row.total.uram, 0)});
      t.add_row({"total", "", "", "", fixed(r.total.lut, 0), fixed(r.total.ff, 0), fixed(r.total.dsp, 0),
                 fixed(r.total.bram18, 0), fixed(r.total.uram, 0)});
      std::cout << "Model resources of design '" << r.design << "' per block (all instances of each):\n\n";
      t.print(std::cout);
      return 0;
    }
    if (!rows_out->empty()) check_output_file(*rows_out, "--rows");
    std::vector<rtl::YosysRow> rows;
    std::string tables;
    for (const auto& path : *table) {
      auto more = rtl::read_yosys_table(path);
      rows.insert(rows.end(), more.begin(), more.end());
      tables += (tables.empty() ? "" : ", ") + path;
    }
    if (!rows_out->empty()) {
      std::ostringstream csv;
      csv << "name,block,params,f0,f1,f2,f3,memory_lut,memory_ff,lut,ff\n";
      for (const auto& r : rows) {
        const auto m = rtl::model_of(r.point);
        csv << r.point.name << ',' << arch::logic_block_name(m.block) << ',';
        for (std::size_t i = 0; i < r.point.params.size(); ++i)
          csv << (i ? " " : "") << r.point.params[i].first << '=' << r.point.params[i].second;
        for (double f : m.features) csv << ',' << f;
        csv << ',' << m.memory.lut << ',' << m.memory.ff << ',' << r.lut << ',' << r.ff << '\n';
      }
      write_file_atomic(*rows_out, csv.str());
    }
    Table t;
    t.add_column("block", Table::Align::Left);
    for (const char* c : {"rows", "LUT mean", "LUT max", "FF mean", "FF max", "LUT mean fit", "LUT max fit",
                          "FF mean fit", "FF max fit"})
      t.add_column(c);
    std::ostringstream fitted;
    double dsp_model = 0, dsp_yosys = 0, bram_model = 0, bram_yosys = 0;
    std::ostringstream dsp_rows;  // rows where the DSP counts differ
    int dsp_differ = 0;
    for (const auto& r : rows) {
      const auto m = rtl::model_of(r.point);
      dsp_model += m.total.dsp, dsp_yosys += r.dsp;
      if (m.total.dsp != r.dsp) {
        ++dsp_differ;
        dsp_rows << "  " << r.point.name << ": model " << m.total.dsp << ", yosys " << r.dsp << "\n";
      }
      bram_model += m.total.bram18 + 16 * m.total.uram, bram_yosys += r.bram18 + 16 * r.uram;
    }
    for (int b = 0; b < arch::kLogicBlocks; ++b) {
      const auto block = static_cast<arch::LogicBlock>(b);
      const auto before = rtl::model_errors(block, rows, arch::logic_coefficients(block));
      if (before.lut.rows == 0) {
        fitted << "    /* " << std::left << std::setw(15) << arch::logic_block_name(block) << " */ "
               << coefficients_text(arch::logic_coefficients(block)) << ",  // not in the table: kept\n";
        continue;
      }
      const auto c = rtl::fit_logic(block, rows);
      const auto after = rtl::model_errors(block, rows, c);
      t.add_row({std::string(arch::logic_block_name(block)), std::to_string(before.lut.rows), pct(before.lut.mean_abs),
                 pct(before.lut.max_abs), pct(before.ff.mean_abs), pct(before.ff.max_abs), pct(after.lut.mean_abs),
                 pct(after.lut.max_abs), pct(after.ff.mean_abs), pct(after.ff.max_abs)});
      fitted << "    /* " << std::left << std::setw(15) << arch::logic_block_name(block) << " */ "
             << coefficients_text(c) << ",\n";
    }
    std::cout << "LUT/FF of " << rows.size() << " synthesised instances (" << tables
              << "): relative error of the model with the committed coefficients, then refitted\n\n";
    t.print(std::cout);
    std::cout << "\nDSP48E2 over all rows: model " << dsp_model << ", yosys " << dsp_yosys
              << "   BRAM18 (+16 per URAM): model " << bram_model << ", yosys " << bram_yosys << "\n"
              << "DSP48E2 per row: " << rows.size() - static_cast<std::size_t>(dsp_differ) << " of " << rows.size()
              << " rows equal" << (dsp_differ > 0 ? ", these differ:\n" : "\n") << dsp_rows.str();
    std::cout << "\nRefitted coefficients (features per block: logic_feature_names in Resources.h):\n" << fitted.str();
    return 0;
  };
}

}  // namespace mixtd::cli
