// What the search writes (private to mixtd::evolution): CSV rows, the
// settings a resume must match, the checkpoint's JSON, and two constants the
// loop derives once.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "Engine.h"

namespace mixtd::search::detail {

std::string fixed_str(double v, int decimals);
std::string number(double v);  // %.10g

// The search's own settings, by the CLI option that sets them.
Settings search_settings(const SearchOptions& o, const SpaceOptions& space);

// File name -> header lines, for OutputFiles::open.
std::map<std::string, std::string> file_headers(const arch::Design& base, const Settings& settings,
                                                const std::vector<std::string>& features);

std::string candidate_row(std::int64_t row, std::int64_t generation, const Outcome& o, const HardwareEval* e,
                          std::int64_t batch);
std::string generation_row(const GenerationStats& s);
// labels.csv, in `mixtd dataset`'s format (search/Dataset.h), so `mixtd predictor train` reads it.
std::string label_row(std::size_t index, const std::string& key, const SimLabel& l,
                      const std::vector<double>& features);

// FPS·MACs of the design whose every layer sits nearest `mac_ratio` (the
// MACs oracle's constant); the undecomposed design when that does not fit.
double macs_constant(const SearchSpace& space, HardwareCache& hw, double mac_ratio);
// --pareto: the FPS that normalises the hypervolume (the target, else the
// first population's fastest design).
double hv_scale(const std::vector<Member>& pool, double target);

// The checkpoint: the state, the settings and the hardware cache.
std::string checkpoint_json(const State& st, const Settings& settings, const std::map<std::string, HardwareEval>& hw);
// Throws naming the file and the first setting that differs from `expected`.
void read_checkpoint(const std::filesystem::path& path, const Settings& expected, State& st,
                     std::map<std::string, HardwareEval>& hw);

}  // namespace mixtd::search::detail
