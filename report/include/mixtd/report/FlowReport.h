// What `mixtd flow` reports (issue 23), as plain data: the flow fills it,
// to_json() and to_html() write report.json and one self-contained
// report.html (inline CSS and SVG, no JavaScript, no external URL) with the
// same figures, formatted by one rule (Format.h). Every section may be
// missing (the step did not run): an empty std::optional, or an empty list,
// becomes null in the JSON and "not run" on the page. Nothing here reads a
// clock or the environment: the same report always gives the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mixtd::report {

using Num = std::optional<double>;

struct Header {
  std::string flow, network, device;  // empty: unknown
  Num clock_mhz;
  Num budget;        // fraction of the device the solver may use (0.9)
  Num fps_target;    // batch-1 FPS the search aims at
  std::string date;  // given by the caller (the library never reads the clock)
};

// One resource of the whole design: used, and what the device has.
struct ResourceUse {
  double used = 0;
  Num available;  // the device's total
};

// The undecomposed network's design at the same device and budget, as the
// search evaluated it once (its summary.json): what the headline's ratios
// are taken against. The report never recomputes it.
struct Undecomposed {
  Num fps_batch1_analytical;  // absent: the undecomposed design does not fit the budget
  Num fps_batch1_systemc;     // absent: the search did not simulate it (--no-final-verify)
  std::optional<std::int64_t> weight_bytes;
};

// What a hardware engineer looks for first. Accuracies are top-1 in percent.
struct Headline {
  Num fps_batch1_analytical, fps_peak_analytical;
  Num fps_batch1_systemc, fps_peak_systemc;
  Num latency_cycles, latency_ms;  // batch 1
  std::optional<ResourceUse> dsp, bram18, uram, lut, ff;
  std::optional<std::int64_t> weight_bytes;
  Num top1_float, top1_bfp8, top1_decomposed, top1_finetuned;
  std::optional<Undecomposed> undecomposed{};  // absent: the search did not record it
};

// τ of one layer (SPEC: t ∈ {none, svd, cpd}, groups g1, g2, rank r).
struct Tau {
  std::string type = "none";
  int g1 = 1, g2 = 1, rank = 0;
};

struct LayerRow {
  std::string name, type;      // type: conv, linear, pool, ...
  std::optional<Tau> tau;      // absent: not decomposable
  Num mac_ratio, param_ratio;  // decomposed / undecomposed layer
  Num cycles;                  // the layer's interval, cycles per frame
  Num dsp, bram18, lut;
  bool bottleneck = false;  // sets the pipeline's interval
};

struct Generation {
  double generation = 0;
  Num best_accuracy;  // top-1 %, of the best design so far
  Num best_fps;       // batch-1 FPS of that design
};

struct SearchPoint {
  double fps = 0, accuracy = 0;  // batch-1 FPS (the oracle's), top-1 %
  bool feasible = false;         // meets the FPS target and fits the budget
};

// One labelled design in the search's plots: a baseline's answer or the
// search's own, at the oracle's FPS and the search's fitness (top-1 %).
struct Marker {
  std::string name;  // "uniform", "greedy", "alds", "answer"
  double fps = 0, accuracy = 0;
};

struct Search {
  std::string oracle;  // macs, analytical, forest, systemc
  std::vector<Generation> convergence;
  std::vector<SearchPoint> points;
  std::vector<Marker> baselines{};  // the seeded start's baseline answers (candidates.csv kind seed-*)
  std::optional<Marker> answer{};   // the search's answer (summary.json best); absent without one
};

struct FpsPair {
  double systemc = 0, predicted = 0;  // batch-1 FPS; both > 0
};

struct Predictor {
  std::vector<FpsPair> pairs;  // the forest's prediction against SystemC
};

// One frame or one design seen by the three models of the machine.
struct AgreementRow {
  std::string name;
  Num analytical, systemc, rtl;  // cycles
};

struct Agreement {
  std::vector<AgreementRow> rows;
};

struct PackageFile {
  std::string path;  // inside the package folder
  std::int64_t bytes = 0;
};

struct SlrUse {
  int slr = 0;
  std::vector<std::string> blocks;  // graph order
  Num dsp, bram18, uram, lut;
};

struct Package {
  std::string platform;
  Num kernel_mhz;
  std::vector<PackageFile> files;
  std::vector<SlrUse> slrs;                   // empty: no floorplan
  std::vector<std::string> crossing_streams;  // streams between SLRs
};

enum class StepStatus { ran, skipped_unchanged, not_run, failed };

// "ran", "skipped-unchanged", "not-run", "failed" (as in the JSON).
std::string to_string(StepStatus s);

struct Step {
  std::string name;
  StepStatus status = StepStatus::not_run;
  Num wall_seconds;
  std::string summary;  // one line
};

struct FlowReport {
  Header header;
  std::optional<Headline> headline;
  std::vector<LayerRow> layers;  // graph order; empty: not run
  std::optional<Search> search;
  std::optional<Predictor> predictor;
  std::optional<Agreement> agreement;
  std::optional<Package> package;
  std::vector<Step> steps;
};

// report.json: stable key order, every key always present (null when
// missing), numbers by format_number(), two-space indentation.
std::string to_json(const FlowReport& r);

// report.html: one self-contained page, sections in the order of the
// struct, each figure formatted as in to_json().
std::string to_html(const FlowReport& r);

}  // namespace mixtd::report
