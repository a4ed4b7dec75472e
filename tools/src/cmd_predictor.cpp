// mixtd predictor train|eval — the random-forest performance predictor,
// trained on SystemC-labelled designs (mixtd dataset generate) and judged
// on held-out ones next to the analytical model and a MACs-only estimate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "CliChecks.h"
#include "Commands.h"
#include "Table.h"
#include "mixtd/report/ScatterSvg.h"
#include "mixtd/search/Dataset.h"
#include "mixtd/search/Metrics.h"
#include "mixtd/search/Predictor.h"
#include "mixtd/search/RandomForest.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

search::FeatureMatrix matrix(const search::LabelledSet& s) {
  search::FeatureMatrix m;
  m.rows = s.rows();
  m.cols = s.features.size();
  m.values = s.x;
  return m;
}

std::string percent(double fraction, int digits = 1) { return fixed(100 * fraction, digits) + "%"; }

nlohmann::json to_json(const search::Accuracy& a) {
  return {{"mape", a.mape},         {"rmspe", a.rmspe},     {"within5", a.within5},
          {"within10", a.within10}, {"kendall", a.kendall}, {"spearman", a.spearman}};
}

Run add_fit_command(CLI::App& predictor) {
  auto* cmd = predictor.add_subcommand("train", "Fit the random forest on a labelled CSV and save it");
  struct Args {
    std::string csv, out, target = "ratio";
    search::ForestParams p;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("data", a->csv, "labelled designs (mixtd dataset generate)")->required();
  cmd->add_option("-o,--output", a->out, "the model file to write")->required();
  cmd->add_option("--target", a->target,
                  "what the forest learns: ratio (simulated / analytical FPS, a correction of the model) or fps")
      ->capture_default_str();
  cmd->add_option("--trees", a->p.trees, "trees in the forest")->capture_default_str()->check(in_range(1, 100000));
  cmd->add_option("--mtry", a->p.mtry, "features tried per split (0 = features / 3)")->capture_default_str();
  cmd->add_option("--max-depth", a->p.max_depth, "deepest split (0 = unlimited)")->capture_default_str();
  cmd->add_option("--min-leaf", a->p.min_leaf, "bootstrap samples per leaf at least")->capture_default_str();
  cmd->add_option("--seed", a->p.seed, "tree t draws from (seed, t)")->capture_default_str();
  cmd->add_option("--threads", a->p.threads, "fit threads (0 = all cores; the fit is identical for any)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->footer(
      "Features are every column of the CSV except index, seed, status and the simulated targets: per\n"
      "layer t, g1, g2, r; totals; the analytical estimates. The MACs-only baseline's constant\n"
      "(FPS ≈ k / MACs) is fitted here too and stored with the model.\n\n"
      "Example:\n  mixtd predictor train configs/datasets/resnet18-u250-train.csv -o rf.bin");
  return [a] {
    check_output_file(a->out, "--output");
    const search::Target target = search::parse_target(a->target);
    const search::Dataset d = search::read_dataset(a->csv);
    const search::LabelledSet s = search::labelled_set(d, target);
    require(s.rows() >= 10, a->csv + ": " + std::to_string(s.rows()) + " usable rows; a forest needs at least 10");
    const auto t0 = std::chrono::steady_clock::now();
    search::RandomForest rf = search::RandomForest::fit(matrix(s), s.y, a->p, s.features);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rf.metadata["target"] = search::to_string(target);
    char k[64];
    std::snprintf(k, sizeof k, "%a", search::fit_macs_constant(s));
    rf.metadata["macs_constant"] = k;
    rf.metadata["trained_on"] = a->csv;
    rf.metadata["rows"] = std::to_string(s.rows());
    rf.save(a->out);

    std::vector<std::size_t> order(rf.features());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t x, std::size_t y) { return rf.impurity_importance()[x] > rf.impurity_importance()[y]; });
    if (a->json) {
      nlohmann::json imp = nlohmann::json::object();
      for (std::size_t f : order) imp[rf.feature_names()[f]] = rf.impurity_importance()[f];
      std::cout << nlohmann::json{{"model", a->out},           {"rows", s.rows()},
                                  {"features", rf.features()}, {"target", search::to_string(target)},
                                  {"trees", rf.trees()},       {"oob_rmse", rf.oob_rmse()},
                                  {"oob_r2", rf.oob_r2()},     {"fit_seconds", seconds},
                                  {"impurity_importance", imp}}
                       .dump(2)
                << "\n";
      return 0;
    }
    std::cout << "trained " << rf.trees() << " trees on " << s.rows() << " designs × " << rf.features() << " features ("
              << a->csv << ", " << d.skipped << " failed rows skipped) in " << fixed(seconds, 2) << " s\n"
              << "target: " << search::to_string(target)
              << (target == search::Target::Ratio ? " (simulated / analytical batch-1 FPS)"
                                                  : " (simulated batch-1 FPS)")
              << "\nout-of-bag: RMSE " << fixed(rf.oob_rmse(), 4) << ", R² " << fixed(rf.oob_r2(), 3) << "\n\n";
    Table t;
    t.add_column("feature", Table::Align::Left);
    t.add_column("importance");
    for (std::size_t i = 0; i < std::min<std::size_t>(10, order.size()); ++i)
      t.add_row({rf.feature_names()[order[i]], percent(rf.impurity_importance()[order[i]])});
    std::cout << "most important features (mean decrease in squared error):\n";
    t.print(std::cout);
    std::cout << "\nwrote " << a->out << "\n";
    return 0;
  };
}

Run add_eval_command(CLI::App& predictor) {
  auto* cmd = predictor.add_subcommand(
      "eval", "Judge a trained forest on held-out designs, next to the analytical model and MACs-only");
  struct Args {
    std::string model, csv, plot;
    bool json = false, importance = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("model", a->model, "a model file from `mixtd predictor train`")->required();
  cmd->add_option("data", a->csv, "labelled designs the forest has not seen")->required();
  cmd->add_option("--plot", a->plot, "write a predicted-vs-simulated scatter plot (SVG)");
  cmd->add_flag("--importance", a->importance, "also print permutation importance on this data");
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->footer(
      "Every figure is against the SystemC-simulated batch-1 FPS: MAPE and RMSPE (relative errors),\n"
      "the share of designs within ±5% and ±10%, and how well each predictor orders the designs\n"
      "(Kendall τ-b, Spearman ρ — what the search needs). The MACs-only estimate is k / MACs with k\n"
      "fitted on the training set (the paper's baseline).\n\n"
      "Example:\n  mixtd predictor eval rf.bin configs/datasets/resnet18-u250-test.csv --plot eval.svg");
  return [a] {
    if (!a->plot.empty()) check_output_file(a->plot, "--plot");
    const search::RandomForest rf = search::RandomForest::load(a->model);
    const auto target_it = rf.metadata.find("target");
    const auto macs_it = rf.metadata.find("macs_constant");
    require(target_it != rf.metadata.end() && macs_it != rf.metadata.end(),
            a->model + ": not a predictor model (no target / macs_constant; train it with `mixtd predictor train`)");
    const search::Target target = search::parse_target(target_it->second);
    const double k = std::strtod(macs_it->second.c_str(), nullptr);
    const search::Dataset d = search::read_dataset(a->csv);
    const search::LabelledSet s = search::labelled_set(d, target, rf.feature_names(), a->model);
    require(s.rows() >= 2, a->csv + ": " + std::to_string(s.rows()) + " usable rows; need at least 2");

    std::vector<double> forest, spread, macs_only;
    for (std::size_t i = 0; i < s.rows(); ++i) {
      const double* row = s.x.data() + i * s.features.size();
      forest.push_back(search::predicted_fps(s, target, i, rf.predict(row)));
      spread.push_back(target == search::Target::Ratio ? rf.spread(row) : rf.spread(row) / forest.back());
      macs_only.push_back(k / s.macs[i]);
    }
    const search::Accuracy fa = search::accuracy(forest, s.simulated), aa = search::accuracy(s.analytical, s.simulated),
                           ma = search::accuracy(macs_only, s.simulated);
    const double mean_spread = std::accumulate(spread.begin(), spread.end(), 0.0) / static_cast<double>(spread.size());

    if (!a->plot.empty()) {
      const std::string svg =
          report::scatter_svg("Batch-1 FPS of " + std::to_string(s.rows()) + " held-out designs (" + a->csv + ")",
                              "simulated FPS (SystemC)", "predicted FPS",
                              {{"MACs only", "#9e9e9e", s.simulated, macs_only},
                               {"analytical", "#1f77b4", s.simulated, s.analytical},
                               {"random forest", "#d62728", s.simulated, forest}});
      write_file_atomic(a->plot, svg);
    }
    std::vector<double> perm;
    if (a->importance) {
      search::FeatureMatrix m = matrix(s);
      perm = rf.permutation_importance(m, s.y, 3, 1);
    }
    if (a->json) {
      nlohmann::json j{{"model", a->model},
                       {"data", a->csv},
                       {"rows", s.rows()},
                       {"forest", to_json(fa)},
                       {"analytical", to_json(aa)},
                       {"macs_only", to_json(ma)},
                       {"mean_tree_spread", mean_spread}};
      if (!perm.empty()) {
        nlohmann::json p = nlohmann::json::object();
        for (std::size_t f = 0; f < perm.size(); ++f) p[rf.feature_names()[f]] = perm[f];
        j["permutation_importance"] = p;
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << s.rows() << " held-out designs (" << a->csv << "), batch-1 FPS against SystemC\n\n";
    Table t;
    t.add_column("predictor", Table::Align::Left);
    for (const char* c : {"MAPE", "RMSPE", "within ±5%", "within ±10%", "Kendall τ", "Spearman ρ"}) t.add_column(c);
    auto row = [&](const std::string& name, const search::Accuracy& x) {
      t.add_row({name, percent(x.mape, 2), percent(x.rmspe, 2), percent(x.within5), percent(x.within10),
                 fixed(x.kendall, 3), fixed(x.spearman, 3)});
    };
    row("random forest (" + search::to_string(target) + ")", fa);
    row("analytical model", aa);
    row("MACs only", ma);
    t.print(std::cout);
    std::cout << "\nforest uncertainty: mean spread over trees " << percent(mean_spread, 2)
              << " of the predicted FPS\n";
    if (!perm.empty()) {
      std::vector<std::size_t> order(perm.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return perm[x] > perm[y]; });
      Table p;
      p.add_column("feature", Table::Align::Left);
      p.add_column("MSE increase when shuffled");
      for (std::size_t i = 0; i < std::min<std::size_t>(10, order.size()); ++i) {
        char b[32];
        std::snprintf(b, sizeof b, "%.3g", perm[order[i]]);
        p.add_row({rf.feature_names()[order[i]], b});
      }
      std::cout << "\npermutation importance on this data:\n";
      p.print(std::cout);
    }
    if (!a->plot.empty()) std::cout << "\nwrote " << a->plot << "\n";
    return 0;
  };
}

}  // namespace

Run add_predictor(CLI::App& app) {
  auto* cmd = app.add_subcommand("predictor", "Random-forest performance predictor: train, evaluate");
  cmd->require_subcommand(1);
  Run train = add_fit_command(*cmd), eval = add_eval_command(*cmd);
  auto* train_cmd = cmd->get_subcommand("train");
  return [cmd, train_cmd, train, eval] { return train_cmd->parsed() ? train() : eval(); };
}

}  // namespace mixtd::cli
