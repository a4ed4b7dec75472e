// Labelled designs (SPEC "The search"; docs/predictor.md): random τ, ψ from
// the solver, each design simulated in SystemC, one CSV row per design with
// its features, the analytical estimates and the simulated figures.
//
// The CSV is crash-safe and resumable: design i is a pure function of
// (seed, i), rows are appended in index order, each with one write(2) and an
// fsync, and a rerun drops a torn last line, checks that the header (and
// the generation parameters in the first line) match, and continues at the
// first missing index — nothing lost, nothing duplicated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Design.h"
#include "mixtd/support/Rng.h"

namespace mixtd::search {

// τ sampling: per design a target MAC ratio ρ ~ N(mac_ratio, mac_sigma)
// (clamped to [0.05, 1]); per decomposable layer, with probability
// `undecomposed` no decomposition, else a candidate (td::layer_candidates,
// all groupings up to `max_chunks`) drawn with weight
// exp(−(ratio − ρ)² / (2·spread²)) where ratio = candidate MACs / layer MACs
// (Mixed-TD's Gaussian prior around a target compression).
struct SamplerOptions {
  double mac_ratio = 0.5, mac_sigma = 0.15, spread = 0.1;
  double undecomposed = 0.15;
  std::int64_t max_chunks = 8;
};
arch::Design sample_tau(const arch::Design& base, Rng& rng, const SamplerOptions& options = {});

// Features of a design (the forest's inputs): per conv layer, in network
// order, `<layer>.t` (td::TdType as 0..3), `.g1`, `.g2`, `.r`; totals
// `macs`, `params`; the analytical `interval`, `fill` (pipeline depth),
// `latency`, `fps_batch1`, `fps_peak`, `dsp`, `bram18`, `uram`.
std::vector<std::string> feature_names(const arch::Design& d);
std::vector<double> features(const arch::Design& d, const arch::Report& r);

// Simulated targets, in this column order after the features.
inline const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = {"sim_interval", "sim_latency", "sim_fps_batch1", "sim_fps_peak"};
  return names;
}

struct DatasetOptions {
  std::int64_t designs = 100;  // rows wanted in the file
  std::uint64_t seed = 1;
  int jobs = 0;            // simulations at once (0 = cores)
  double timeout_s = 600;  // per simulation
  std::int64_t frames = 3;
  SamplerOptions sampler;
};

struct Progress {
  std::int64_t done = 0, total = 0, failed = 0;
  double elapsed_s = 0;
};

// Generates rows [rows already in `csv`, options.designs) and appends them.
// `base` gives network, device, budget and clock; `spec` and `device` are
// recorded in the file's first line and must match on resume. Throws
// mixtd::Error naming the file and line when an existing file does not match.
// Returns the number of rows written by this call.
std::int64_t generate_dataset(const arch::Design& base, const std::string& spec, const std::string& device,
                              const std::filesystem::path& csv, const DatasetOptions& options,
                              const std::function<void(const Progress&)>& progress = {});

// A labelled CSV read back: every column by name, rows with status "ok".
struct Dataset {
  std::string source;                         // the file read, for messages
  std::string network;                        // `network=` of its first line
  std::vector<std::string> columns;           // numeric columns, file order
  std::vector<std::vector<double>> rows;      // rows × columns
  std::int64_t skipped = 0;                   // rows whose simulation failed
  int column(const std::string& name) const;  // -1 if absent
};
// Refuses (mixtd::Error with the file and line) a missing or foreign first
// line, a header without `index`/`status` or a target, a header whose
// feature columns are not those of the first line's `network=` (checked when
// that is a zoo name or a file that exists, as is or beside the CSV), a row
// with the wrong number of fields, a field that is not a finite number, and
// an "ok" row whose simulated targets, fps_batch1 or macs are not above 0
// (every later step divides by them; generate_dataset never writes one).
Dataset read_dataset(const std::filesystem::path& csv);

}  // namespace mixtd::search
