// mixtd fitness-study — how well each fitness the search can use ranks
// designs the way fine-tuning will (issue 39): seeded random designs across
// a range of MAC ratios, each scored by every fitness, then fine-tuned the
// same way and measured on the validation split; Spearman ρ per fitness.
// Resumable: designs.csv gets one row per finished design and a rerun of
// the same command continues after the last one.
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/nn/Model.h"
#include "mixtd/report/Format.h"
#include "mixtd/search/Metrics.h"
#include "mixtd/search/SearchSpace.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Csv.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"
#include "mixtd/support/Rng.h"

namespace mixtd::cli {

void load_for_accuracy(const std::string& spec, const std::string& weights, net::Network& net, nn::Taus& taus);

namespace {

namespace fs = std::filesystem;

struct StudyArgs {
  std::string net, weights, device = "zc706", out, types = "mixed", groups = "paper";
  nn::DataConfig data;
  std::int64_t designs = 40, eval_images = nn::kEvalImages, calib = 16, ft_epochs = 1, ft_images = 4000;
  double lo = 0.3, hi = 0.8, ft_lr = 5e-4, ft_alpha = 0.9, ft_temperature = 4;
  std::uint64_t seed = 1;
  int threads = 2;
  bool with_test = false;
};

// The fitnesses compared: the paper's (top-1 on a fresh 128-image batch per
// design), then on the fixed set top-1 and agreement with the teacher,
// without and with the statistics correction. One query per oracle gives
// both top-1 and the teacher agreement.
struct OracleKind {
  std::string top1_column, teacher_column;  // empty: not reported
  nn::StatsCorrection correction;
  bool paper;
};

const std::vector<OracleKind>& oracle_kinds() {
  static const std::vector<OracleKind> v = {
      {"paper", "", nn::StatsCorrection::None, true},
      {"fixed_top1", "teacher", nn::StatsCorrection::None, false},
      {"top1_bias", "teacher_bias", nn::StatsCorrection::Bias, false},
      {"top1_scale", "teacher_scale", nn::StatsCorrection::Scale, false},
  };
  return v;
}

std::vector<std::string> fitness_columns() {
  std::vector<std::string> c;
  for (const auto& k : oracle_kinds()) {
    c.push_back(k.top1_column);
    if (!k.teacher_column.empty()) c.push_back(k.teacher_column);
  }
  return c;
}

// User-typed text in the one-line `#` header: a newline or other control
// character would end the comment and corrupt the table, so it is written
// escaped as in a JSON string (report::json_string, without its quotes).
std::string one_line(const std::string& text) {
  const std::string quoted = report::json_string(text);
  return quoted.substr(1, quoted.size() - 2);
}

std::string settings_line(const StudyArgs& a) {
  std::ostringstream s;
  s << "net=" << one_line(a.net) << " weights=" << one_line(a.weights) << " data=" << one_line(data_settings(a.data))
    << " types=" << one_line(a.types) << " groups=" << one_line(a.groups) << " designs=" << a.designs
    << " ratios=" << a.lo << ".." << a.hi << " eval=" << a.eval_images << " calib=" << a.calib
    << " finetune=" << a.ft_epochs << "x" << a.ft_images << " test=" << a.with_test << " lr=" << a.ft_lr
    << " kd=" << a.ft_alpha << "@" << a.ft_temperature << " seed=" << a.seed;
  return s.str();
}

// Rows already in designs.csv (their index), after checking they came from the same settings.
std::int64_t done_rows(const fs::path& csv, const std::string& header, const std::string& settings) {
  if (!fs::exists(csv)) return 0;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  require(line == "# " + settings,
          csv.string() + ": written with other settings (" + line.substr(2) + "); use another -o or the same options");
  std::getline(in, line);
  require(line == header, csv.string() + ": unexpected header");
  std::int64_t n = 0;
  while (std::getline(in, line))
    if (!line.empty()) ++n;
  return n;
}

void print_rho(const fs::path& csv, const fs::path& json_out) {
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  const auto head = split_csv_line(line);
  std::map<std::string, std::vector<double>> col;
  while (std::getline(in, line)) {
    const auto f = split_csv_line(line);
    for (std::size_t i = 0; i < f.size() && i < head.size(); ++i)
      col[head[i]].push_back(std::strtod(f[i].c_str(), nullptr));
  }
  if (col["val_top1_finetuned"].size() < 3) return;
  Table t;
  t.add_column("fitness", Table::Align::Left);
  t.add_column("ρ vs fine-tuned validation top-1");
  const bool test = !col["test_top1_finetuned"].empty() && std::isfinite(col["test_top1_finetuned"][0]);
  if (test) t.add_column("ρ vs fine-tuned test top-1");
  nlohmann::json j;
  for (const auto& name : fitness_columns()) {
    const auto rv = search::accuracy(col[name], col["val_top1_finetuned"]).spearman;
    j[name] = {{"rho_validation", rv}};
    if (!test) {
      t.add_row({name, fixed(rv, 3)});
      continue;
    }
    const auto rt = search::accuracy(col[name], col["test_top1_finetuned"]).spearman;
    t.add_row({name, fixed(rv, 3), fixed(rt, 3)});
    j[name]["rho_test"] = rt;
  }
  j["designs"] = col["val_top1_finetuned"].size();
  std::cout << col["val_top1_finetuned"].size()
            << " designs; Spearman ρ of each fitness against the fine-tuned top-1:\n";
  t.print(std::cout);
  write_file_atomic(json_out, j.dump(2) + "\n");
}

}  // namespace

Run add_fitness_study(CLI::App& app) {
  auto* cmd = app.add_subcommand("fitness-study",
                                 "How well each search fitness ranks designs as fine-tuning does (Spearman ρ)");
  auto a = std::make_shared<StudyArgs>();
  cmd->add_option("NET", a->net, "a zoo name, a .yaml description or an .onnx model")->required();
  cmd->add_option("--weights", a->weights, "trained weights (.onnx) for NET");
  cmd->add_option("--device", a->device, "device of the designs (their candidates only)")->capture_default_str();
  cmd->add_option("-o,--output", a->out, "output folder (designs.csv, rho.json); rerun to continue")->required();
  cmd->add_option("--designs", a->designs, "random designs")->capture_default_str()->check(in_range(3, 10000));
  cmd->add_option("--min-ratio", a->lo, "prior mean per-layer MAC ratio of the first design")
      ->capture_default_str()
      ->check(in_range(0.05, 1.0));
  cmd->add_option("--max-ratio", a->hi, "... and of the last (evenly between)")
      ->capture_default_str()
      ->check(in_range(0.05, 1.0));
  cmd->add_option("--types", a->types, "mixed | svd | cpd")->capture_default_str();
  cmd->add_option("--groups", a->groups, "paper | none | all")->capture_default_str();
  cmd->add_option("--eval-images", a->eval_images, "the fixed evaluation set")
      ->capture_default_str()
      ->check(in_range(16, 1000000));
  cmd->add_option("--calib", a->calib, "images calibrating the BFP8 exponents")
      ->capture_default_str()
      ->check(in_range(1, 100000));
  cmd->add_option("--finetune-epochs", a->ft_epochs, "fine-tune epochs per design")
      ->capture_default_str()
      ->check(in_range(1, 1000));
  cmd->add_option("--finetune-images", a->ft_images, "training images per epoch (0: all)")
      ->capture_default_str()
      ->check(in_range(0, 100000000));
  cmd->add_option("--finetune-lr", a->ft_lr, "Adam, cosine")->capture_default_str()->check(in_range(1e-9, 10.0));
  cmd->add_option("--finetune-alpha", a->ft_alpha, "distillation weight (0: plain cross-entropy)")
      ->capture_default_str()
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--finetune-temperature", a->ft_temperature, "distillation temperature")
      ->capture_default_str()
      ->check(in_range(0.1, 100.0));
  cmd->add_option("--seed", a->seed, "designs and fine-tunes")->capture_default_str();
  cmd->add_flag("--with-test", a->with_test, "also measure the fine-tuned designs on the test set (for the report)");
  cmd->add_option("--threads", a->threads, "LibTorch threads")->capture_default_str()->check(in_range(1, 256));
  add_dataset_options(cmd, a->data, "data set (it needs a training part)");
  cmd->footer(
      "Each design is drawn from the search's prior (per-layer MAC ratio evenly from --min-ratio to\n"
      "--max-ratio), scored by every fitness (paper: top-1 on a fresh 128-image search batch; the\n"
      "rest on the first --eval-images search images: top-1 or agreement with the undecomposed\n"
      "network, without and with the statistics correction), fine-tuned from the scale-corrected\n"
      "factors (distillation, BFP8 fake-quant) and measured on the validation split (--with-test:\n"
      "and the test set).\n\n"
      "Example (about 1.5 min a design on 2 cores):\n"
      "  mixtd fitness-study resnet18-fmnist:width=0.25 --weights configs/networks/resnet18-fmnist-w0.25.onnx \\\n"
      "      --designs 40 -o fitness-study");
  return [a] {
    require(a->lo <= a->hi, "--min-ratio " + fixed(a->lo, 2) + " is above --max-ratio " + fixed(a->hi, 2));
    check_output_dir(a->out, "--output");
    net::Network n;
    nn::Taus none;
    load_for_accuracy(a->net, a->weights, n, none);
    const nn::DataSplit data = load_dataset(a->data, n, true, "fitness-study");
    nn::OracleOptions reserve;  // the fixed set leaves the calibration and correction images apart
    reserve.calibration = a->calib;
    reserve.correction = nn::StatsCorrection::Scale;
    const std::int64_t largest = nn::largest_evaluation_set(data.search.size(), reserve);
    require(a->eval_images <= largest,
            "--eval-images " + std::to_string(a->eval_images) + ": legal 16.." + std::to_string(largest));
    arch::Design base = arch::make_design(n, a->net, arch::load_device(a->device), a->device);
    search::SpaceOptions so;
    so.types = search::parse_type_set(a->types);
    so.candidates.groups = search::parse_group_policy(a->groups);
    const search::SearchSpace space(base, so);
    nn::set_threads(a->threads);

    std::vector<std::unique_ptr<nn::AccuracyOracle>> oracles;
    std::shared_ptr<nn::DecompositionCache> shared;  // one SVD / CP-ALS per layer and τ for all
    for (const auto& k : oracle_kinds()) {
      nn::OracleOptions o;
      o.batch = k.paper ? 128 : a->eval_images;
      o.calibration = a->calib;
      o.fitness = nn::Fitness::Teacher;
      o.correction = k.correction;
      o.prefix_cache_mb = 0;  // random designs share few prefixes
      oracles.push_back(shared ? std::make_unique<nn::AccuracyOracle>(shared, data.search, o)
                               : std::make_unique<nn::AccuracyOracle>(n, data.search, o));
      shared = oracles.back()->shared_cache();
    }
    const std::int64_t paper_batches = (data.search.size() - a->calib) / 128;

    const fs::path out = a->out, csv = out / "designs.csv";
    fs::create_directories(out);
    std::string header = "design,mac_ratio,param_ratio";
    for (const auto& c : fitness_columns()) header += "," + c;
    header += ",val_top1_finetuned,test_top1_finetuned,seconds_scores,seconds_finetune,seconds_eval,genome";
    const std::string settings = settings_line(*a);
    const std::int64_t done = done_rows(csv, header, settings);
    if (done == 0) write_file_atomic(csv, "# " + settings + "\n" + header + "\n");
    if (done > 0) std::cerr << "continuing after design " << done << " of " << a->designs << "\n";
    const double base_macs = space.macs(space.undecomposed()), base_params = space.params(space.undecomposed());
    for (std::int64_t i = done; i < a->designs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      search::PriorOptions po;
      po.mac_ratio = a->designs > 1 ? a->lo + (a->hi - a->lo) * static_cast<double>(i) / (a->designs - 1) : a->lo;
      po.sigma = 0.1;
      Rng rng(a->seed * 1000003ULL + static_cast<std::uint64_t>(i));
      const search::Genome g = search::Prior(space, po).sample(rng);
      const nn::Taus taus = space.taus(g);
      std::ostringstream row;
      row << i << "," << fixed(space.macs(g) / base_macs, 4) << "," << fixed(space.params(g) / base_params, 4);
      for (std::size_t k = 0; k < oracles.size(); ++k) {
        const auto sc = oracles[k]->score(taus, oracle_kinds()[k].paper ? i % paper_batches : 0);
        row << "," << fixed(sc.top1, 6);
        if (!oracle_kinds()[k].teacher_column.empty()) row << "," << fixed(sc.fitness, 6);
      }
      const auto t1 = std::chrono::steady_clock::now();
      nn::Model m = oracles[3]->build(taus);  // the scale-corrected factors (the search's default)
      nn::Model teacher = oracles[3]->teacher();
      nn::TrainOptions to;
      to.epochs = a->ft_epochs;
      to.lr = a->ft_lr;
      to.optimizer = "adam";
      to.weight_decay = 0;
      to.seed = a->seed + static_cast<std::uint64_t>(i);
      to.threads = a->threads;
      to.progress_every = 0;
      if (a->ft_alpha > 0) to.distill = {&teacher, a->ft_temperature, a->ft_alpha};
      nn::Dataset part;
      const nn::Dataset* train = &data.train;
      if (a->ft_images > 0 && a->ft_images < data.train.size()) {
        const auto p = nn::permutation(data.train.size(), a->seed);
        part = data.train.subset({p.begin(), p.begin() + a->ft_images});
        train = &part;
      }
      m.train(*train, to);
      const auto t2 = std::chrono::steady_clock::now();
      const double val = m.accuracy(data.validation), test = a->with_test ? m.accuracy(data.test) : NAN;
      const auto t3 = std::chrono::steady_clock::now();
      auto secs = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
      row << "," << fixed(val, 6) << "," << fixed(test, 6) << "," << fixed(secs(t0, t1), 1) << ","
          << fixed(secs(t1, t2), 1) << "," << fixed(secs(t2, t3), 1) << "," << search::SearchSpace::key(g) << "\n";
      write_file_atomic(csv, read_file(csv) + row.str());  // a whole row or none
      std::cerr << "design " << i + 1 << "/" << a->designs << ": MAC ratio " << fixed(space.macs(g) / base_macs, 3)
                << ", fine-tuned validation top-1 " << fixed(100 * val, 2) << "% (" << fixed(secs(t0, t3), 0)
                << " s)\n";
    }
    print_rho(csv, out / "rho.json");
    return 0;
  };
}

}  // namespace mixtd::cli
