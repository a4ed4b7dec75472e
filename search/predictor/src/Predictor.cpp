#include "mixtd/search/Predictor.h"

#include <algorithm>

#include "mixtd/support/Error.h"

namespace mixtd::search {

Target parse_target(const std::string& s) {
  if (s == "fps") return Target::Fps;
  if (s == "ratio") return Target::Ratio;
  throw Error("unknown target '" + s + "' (legal: fps — the simulated batch-1 FPS; ratio — simulated / analytical)");
}

std::string to_string(Target t) { return t == Target::Fps ? "fps" : "ratio"; }

LabelledSet labelled_set(const Dataset& d, Target target, const std::vector<std::string>& features,
                         const std::string& model_source) {
  LabelledSet s;
  std::vector<int> cols;
  if (features.empty()) {
    for (std::size_t c = 0; c < d.columns.size(); ++c) {
      const std::string& n = d.columns[c];
      if (n == "index" || n == "seed" || n.rfind("sim_", 0) == 0) continue;
      s.features.push_back(n);
      cols.push_back(static_cast<int>(c));
    }
  } else {
    s.features = features;
    // The data's own features, in file order, to name the first difference.
    std::vector<std::string> own;
    for (const auto& n : d.columns)
      if (n != "index" && n != "seed" && n.rfind("sim_", 0) != 0) own.push_back(n);
    for (const auto& f : features) {
      const int c = d.column(f);
      if (c < 0) {
        const auto diff = std::mismatch(features.begin(), features.end(), own.begin(), own.end());
        const std::size_t k = static_cast<std::size_t>(diff.first - features.begin());
        const std::string data = d.source.empty() ? std::string("the data") : d.source;
        const std::string model = model_source.empty() ? std::string("the model") : model_source;
        throw Error(data + (d.network.empty() ? "" : " (network=" + d.network + ")") + " does not have the features " +
                    model + " was trained on: feature " + std::to_string(k + 1) + " is '" +
                    (diff.first == features.end() ? std::string("(none)") : *diff.first) + "' in the model, '" +
                    (diff.second == own.end() ? std::string("(none)") : *diff.second) +
                    "' in the data (a model predicts designs of the network it was trained on)");
      }
      cols.push_back(c);
    }
  }
  const int sim = d.column("sim_fps_batch1"), ana = d.column("fps_batch1"), macs = d.column("macs");
  require(sim >= 0 && ana >= 0 && macs >= 0, "the data needs columns sim_fps_batch1, fps_batch1 and macs");
  for (const auto& r : d.rows) {
    for (int c : cols) s.x.push_back(r[static_cast<std::size_t>(c)]);
    const double simulated = r[static_cast<std::size_t>(sim)], analytical = r[static_cast<std::size_t>(ana)];
    s.simulated.push_back(simulated);
    s.analytical.push_back(analytical);
    s.macs.push_back(r[static_cast<std::size_t>(macs)]);
    s.y.push_back(target == Target::Fps ? simulated : simulated / analytical);
  }
  return s;
}

double predicted_fps(const LabelledSet& s, Target target, std::size_t row, double value) {
  return target == Target::Fps ? value : value * s.analytical[row];
}

double fit_macs_constant(const LabelledSet& s) {
  require(s.rows() > 0, "no rows to fit the MACs-only baseline on");
  std::vector<double> k;
  for (std::size_t i = 0; i < s.rows(); ++i) k.push_back(s.simulated[i] * s.macs[i]);
  std::nth_element(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(k.size() / 2), k.end());
  return k[k.size() / 2];
}

}  // namespace mixtd::search
