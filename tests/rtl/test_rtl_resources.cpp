// The analytical model's LUT/FF beside the committed yosys table
// (docs/rtl-resources.csv, scripts/yosys-sweep; docs/rtl-resources.md):
// the table is of the sweep grid, the fit recovers known coefficients, and
// bad tables are refused naming the line. And a design's model figures per
// block (rtl::design_resources, `mixtd resources model`): every module,
// stream and instance of the generated top once, summing to analyse().
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/rtl/DesignResources.h"
#include "mixtd/rtl/Generator.h"
#include "mixtd/rtl/ResourceSweep.h"
#include "mixtd/support/Error.h"

namespace {

using namespace mixtd;

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

const std::string kTable = std::string(MIXTD_SOURCE_DIR) + "/docs/rtl-resources.csv";
// Designs' blocks through yosys (scripts/yosys-sweep --design): the
// resnet18-fmnist:width=0.25 solutions for the U250 and the ZC706, fitted
// together with the grid (docs/rtl-resources.md).
const std::vector<std::string> kDesignTables{std::string(MIXTD_SOURCE_DIR) + "/docs/rtl-resources-resnet18-u250.csv",
                                             std::string(MIXTD_SOURCE_DIR) + "/docs/rtl-resources-resnet18-zc706.csv"};

std::vector<rtl::YosysRow> all_tables() {
  auto rows = rtl::read_yosys_table(kTable);
  for (const auto& t : kDesignTables) {
    const auto more = rtl::read_yosys_table(t);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

std::string params_text(const rtl::SweepPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.params) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

// Every row of the committed table is a point of the sweep grid as it is
// now (a resumed sweep fills in the rest; a changed grid makes rows stale).
TEST(RtlResources, EveryTableRowIsAPointOfTheSweepGrid) {
  std::set<std::tuple<std::string, std::string, std::string>> grid;
  for (const auto& p : rtl::resource_sweep_grid()) grid.insert({p.name, p.module, params_text(p)});
  const auto rows = rtl::read_yosys_table(kTable);
  EXPECT_GE(rows.size(), 50u);
  for (const auto& r : rows)
    EXPECT_TRUE(grid.count({r.point.name, r.point.module, params_text(r.point)}))
        << kTable << ": row " << r.point.name
        << " is not in `mixtd resources grid`: rerun scripts/yosys-sweep --restart";
}

// The fit recovers known coefficients from rows made with them (the FIFO
// and stage points of the grid and the designs' tables, costs = model
// memory + known logic).
TEST(RtlResources, FitRecoversTheCoefficientsRowsWereMadeWith) {
  const arch::LogicCoefficients fifo{{7, 12.5, 0, 0}, {40, 3, 0, 0}}, stage{{900, 40, 60, 25}, {300, 9, 150, 20}};
  // The grid's points and the designs' blocks (the grid has no dense stage
  // of more than 32 products a unit: only the designs' move the tree term).
  std::vector<rtl::SweepPoint> points = rtl::resource_sweep_grid();
  for (const auto& r : all_tables()) points.push_back(r.point);
  std::vector<rtl::YosysRow> rows;
  for (const auto& p : points) {
    const auto m = rtl::model_of(p);
    const arch::LogicCoefficients* c = m.block == arch::LogicBlock::Fifo    ? &fifo
                                       : m.block == arch::LogicBlock::Stage ? &stage
                                                                            : nullptr;
    if (!c) continue;
    rtl::YosysRow r;
    r.point = p;
    const auto t = m.memory + arch::logic_resources(m.features, *c);
    r.lut = t.lut, r.ff = t.ff;
    rows.push_back(r);
  }
  for (const auto& [block, want] :
       {std::pair{arch::LogicBlock::Fifo, fifo}, std::pair{arch::LogicBlock::Stage, stage}}) {
    const auto got = rtl::fit_logic(block, rows);
    for (int i = 0; i < arch::kLogicFeatures; ++i) {
      // logic_resources rounds to whole cells: within half a cell per row.
      EXPECT_NEAR(got.lut[static_cast<std::size_t>(i)], want.lut[static_cast<std::size_t>(i)], 0.6)
          << arch::logic_block_name(block) << " LUT " << i;
      EXPECT_NEAR(got.ff[static_cast<std::size_t>(i)], want.ff[static_cast<std::size_t>(i)], 0.6)
          << arch::logic_block_name(block) << " FF " << i;
    }
    const auto e = rtl::model_errors(block, rows, got);
    EXPECT_LT(e.lut.max_abs, 0.01) << arch::logic_block_name(block);
  }
  EXPECT_THROW(rtl::fit_logic(arch::LogicBlock::Host, rows), Error);
}

// The committed table is the whole grid, and every block kind has at least
// 3 rows per feature of its LUT/FF model, so a refit over-determines it.
TEST(RtlResources, TheTableCoversTheGridWithThreeRowsPerFeature) {
  const auto rows = rtl::read_yosys_table(kTable);
  EXPECT_EQ(rows.size(), rtl::resource_sweep_grid().size()) << kTable << ": the sweep is not complete";
  for (int b = 0; b < arch::kLogicBlocks; ++b) {
    const auto block = static_cast<arch::LogicBlock>(b);
    if (block == arch::LogicBlock::Host) continue;  // not in rtl/lib
    int features = 0;
    for (const auto& n : arch::logic_feature_names(block)) features += n != "-";
    EXPECT_GE(rtl::model_errors(block, rows, arch::logic_coefficients(block)).lut.rows, 3 * features)
        << arch::logic_block_name(block);
  }
}

// The committed coefficients (LogicCoefficients.cpp) are the refit of the
// committed tables: within a tenth of a cell (the fit rounds to 0.01) of
// what `mixtd resources fit docs/rtl-resources.csv
// docs/rtl-resources-resnet18-u250.csv docs/rtl-resources-resnet18-zc706.csv`
// prints, and the model with them within the error docs/rtl-resources.md
// states per block kind. A changed memory rule or feature that is not
// refitted fails here.
TEST(RtlResources, CommittedCoefficientsAreTheFitOfTheTable) {
  const auto rows = all_tables();
  for (int b = 0; b < arch::kLogicBlocks; ++b) {
    const auto block = static_cast<arch::LogicBlock>(b);
    if (block == arch::LogicBlock::Host) continue;
    const auto name = std::string(arch::logic_block_name(block));
    const auto& committed = arch::logic_coefficients(block);
    const auto fit = rtl::fit_logic(block, rows);
    for (std::size_t i = 0; i < static_cast<std::size_t>(arch::kLogicFeatures); ++i) {
      EXPECT_NEAR(committed.lut[i], fit.lut[i], 0.1) << name << " LUT coefficient " << i;
      EXPECT_NEAR(committed.ff[i], fit.ff[i], 0.1) << name << " FF coefficient " << i;
    }
    const auto e = rtl::model_errors(block, rows, committed);
    EXPECT_LT(e.lut.mean_abs, 0.35) << name;
    EXPECT_LT(e.ff.mean_abs, 0.70) << name;
  }
}

// DSP48E2 are counted, not fitted: the model's rule (dsps_for: packed pairs
// for dense stages, one per multiply for depthwise; pool_dsps,
// global_avg_pool_dsps) must give what yosys put in DSPs, row by row.
TEST(RtlResources, ModelDspsAreYosysDspsOnEveryRow) {
  const auto rows = all_tables();
  EXPECT_GT(rows.size(), rtl::read_yosys_table(kTable).size());
  for (const auto& r : rows) EXPECT_EQ(rtl::model_of(r.point).total.dsp, r.dsp) << "row " << r.point.name;
}

// A design's table (scripts/yosys-sweep --design): one row per distinct
// block, images and Verilog constants skipped, and rows of two rtl/lib
// versions refused.
TEST(RtlResources, DesignTablesAreReadAsFitRows) {
  const std::string header = "lib,module,params,instances,lut,ff,dsp,bram18,uram,seconds\n";
  const auto rows = rtl::read_yosys_table(write_temp(
      "mixtd-res-d1.csv", header + "abc,mixtd_stream_fifo,WIDTH=16 DEPTH=4,3,30,13,0,0,0,2.0\n"
                                   "abc,mixtd_repack,W_IN=2 W_OUT=4,1,184,40,0,0,0,2.8\n"
                                   "abc,mixtd_eltwise_add,CHANNELS=64 INPUTS=2 W_IN=2 W_OUT=2 EXPS=16'hfffe BIAS=0 "
                                   "SHIFT=1 RELU=1,1,900,700,0,0,0,12\n"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].point.module, "mixtd_stream_fifo");
  EXPECT_EQ(rows[0].lut, 30);  // one instance's, not x3
  EXPECT_EQ(rows[1].point.param("W_OUT"), 4);
  EXPECT_EQ(rows[2].point.param("INPUTS"), 2);
  EXPECT_THROW(rows[2].point.param("EXPS"), Error);
  try {
    rtl::read_yosys_table(
        write_temp("mixtd-res-d2.csv", header + "abc,mixtd_stream_fifo,WIDTH=16 DEPTH=4,1,30,13,0,0,0,2\n"
                                                "def,mixtd_stream_fifo,WIDTH=8 DEPTH=4,1,20,13,0,0,0,2\n"));
    ADD_FAILURE() << "two rtl/lib versions accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mixtd-res-d2.csv:3: rows of two rtl/lib versions"), std::string::npos)
        << e.what();
  }
}

TEST(RtlResources, ModelOfEverySweepPointAddsMemoryAndLogic) {
  for (const auto& p : rtl::resource_sweep_grid()) {
    const auto m = rtl::model_of(p);
    EXPECT_EQ(m.features[0], 1.0) << p.name;
    EXPECT_GE(m.total.lut, m.memory.lut) << p.name;
    EXPECT_GE(m.total.ff, m.memory.ff) << p.name;
  }
  rtl::SweepPoint bad;
  bad.name = "x";
  bad.module = "mixtd_no_such_block";
  EXPECT_THROW(rtl::model_of(bad), Error);
}

void expect_error(const std::string& path, const std::string& needle) {
  try {
    rtl::read_yosys_table(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RtlResources, BadTablesAreRefusedNamingTheLine) {
  const std::string header = "name,module,params,lut,ff,dsp,bram18,uram,seconds\n";
  expect_error(write_temp("mixtd-res-1.csv", "a,b,c\n"), "mixtd-res-1.csv:1: the header must be");
  expect_error(write_temp("mixtd-res-2.csv", header + "f,mixtd_stream_fifo,WIDTH=8 DEPTH=2,17,21,0,0\n"),
               "mixtd-res-2.csv:2: expected 9 comma-separated fields, found 7");
  expect_error(write_temp("mixtd-res-3.csv", header + "f,mixtd_stream_fifo,WIDTH=8 DEPTH=2,x7,21,0,0,0,1\n"),
               "mixtd-res-3.csv:2: field 4 ('x7') is not a number");
  expect_error(write_temp("mixtd-res-4.csv", header + "f,mixtd_stream_fifo,WIDTH DEPTH=2,17,21,0,0,0,1\n"),
               "mixtd-res-4.csv:2: parameter 'WIDTH' is not NAME=VALUE");
  expect_error(write_temp("mixtd-res-5.csv", header), "has no rows");
  expect_error("/nonexistent/table.csv", "/nonexistent/table.csv: cannot open");
}

// Designs with every streaming block kind the generator builds: tiny with
// grouped SVD engines (forks, group adds, merges), and with random τ and ψ
// (splits, round-robin regroups, repacks where widths differ).
std::vector<arch::Design> block_designs() {
  std::vector<arch::Design> out;
  const arch::Design base = search::testing::zoo_design("tiny:width=2", "zc706");
  out.push_back(search::testing::uniform_tau(base, td::TdType::SvdFilter, 2, 2));
  for (std::uint64_t seed = 7; seed < 10; ++seed) {
    arch::Design d = search::testing::random_tau(base, seed);
    Rng rng(seed);
    search::testing::random_psi(d, rng);
    out.push_back(d);
  }
  return out;
}

void expect_near(const arch::Resources& a, const arch::Resources& b, const std::string& what) {
  const auto near = [&](double x, double y, const char* c) {
    EXPECT_NEAR(x, y, 1e-6 * std::max(1.0, std::abs(y))) << what << ": " << c;
  };
  near(a.dsp, b.dsp, "dsp");
  near(a.bram18, b.bram18, "bram18");
  near(a.uram, b.uram, "uram");
  near(a.lut, b.lut, "lut");
  near(a.ff, b.ff, "ff");
}

// Every graph module and stream is a row, every row's total is count times
// its instance, and the rows sum to analyse()'s total.
TEST(RtlResources, DesignRowsCoverEveryModuleAndSumToTheReport) {
  for (const auto& d : block_designs()) {
    const auto r = rtl::design_resources(d);
    const auto report = arch::analyse(d);
    const auto& g = report.graph;
    ASSERT_GE(r.rows.size(), g.modules.size() + g.streams.size());
    std::multiset<std::string> names;
    arch::Resources sum;
    int repacks = 0;
    for (const auto& row : r.rows) {
      names.insert(row.name);
      sum += row.total;
      expect_near(row.total, row.per_instance.scaled(static_cast<double>(row.count)), row.name);
      EXPECT_TRUE(row.instances.empty() ? row.module.empty() : row.instances.size() == std::size_t(row.count))
          << row.name;
      if (row.kind == "repack") {
        EXPECT_GT(row.total.lut, 0) << row.name;
        ++repacks;
      }
    }
    for (const auto& m : g.modules) EXPECT_EQ(names.count(m.name), 1u) << m.name;
    for (const auto& s : g.streams) EXPECT_EQ(names.count(s.name), 1u) << s.name;
    int repacking_streams = 0;
    for (const auto& s : g.streams) repacking_streams += rtl::needs_repack(g, s);
    EXPECT_EQ(repacks, repacking_streams) << d.name;
    expect_near(sum, report.total, d.name + ": rows against analyse()");
    expect_near(r.total, report.total, d.name + ": total");
    const auto j = rtl::to_json(r);
    EXPECT_EQ(j.at("rows").size(), r.rows.size());
    EXPECT_EQ(j.at("rows").at(0).at("instances").size(), r.rows.at(0).instances.size());
  }
}

// The rows name every instance of the generated mixtd_top.sv once, with the
// module it instantiates, and nothing else: what scripts/yosys-sweep
// --design relies on to put yosys's figures beside the model's.
TEST(RtlResources, DesignRowsNameEveryInstanceOfTheGeneratedTop) {
  int repacks = 0;
  for (const auto& d : block_designs()) {
    const auto r = rtl::design_resources(d);
    const auto g = rtl::generate(d);
    std::map<std::string, std::string> top;  // instance -> module
    const std::regex inst(R"((mixtd_\w+) #\([\s\S]*?\) (\w+) \(\n)");
    const std::string& text = g.files.at(0).text;
    for (std::sregex_iterator it(text.begin(), text.end(), inst), end; it != end; ++it)
      EXPECT_TRUE(top.emplace((*it)[2].str(), (*it)[1].str()).second) << (*it)[2];
    std::size_t listed = 0;
    for (const auto& row : r.rows)
      for (const auto& i : row.instances) {
        ++listed;
        repacks += row.kind == "repack";
        ASSERT_TRUE(top.count(i)) << d.name << ": " << i << " (" << row.name << ") is not in mixtd_top.sv";
        EXPECT_EQ(top.at(i), row.module) << i;
      }
    EXPECT_EQ(listed, top.size()) << d.name;
  }
  EXPECT_GT(repacks, 0) << "no design with a repack: pick other seeds";
}

}  // namespace
