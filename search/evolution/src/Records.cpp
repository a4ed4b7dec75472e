#include "Records.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "mixtd/search/Dataset.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

using nlohmann::json;

std::string fixed_str(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

namespace {

// One more CSV field. (Appending in place also keeps GCC 12's -Wrestrict
// false positive on `"," + std::string` away.)
void field(std::string& row, const std::string& v) {
  row += ',';
  row += v;
}

}  // namespace

Settings search_settings(const SearchOptions& o, const SpaceOptions& space) {
  Settings s;
  s["--strategy"] = to_string(o.strategy);
  s["--pareto"] = o.pareto ? "yes" : "no";
  s["--pareto-cost"] = o.pareto_cost;
  s["--oracle"] = to_string(o.oracle);
  s["--target-fps"] = number(o.target_fps);
  s["--budget"] = number(o.solver.budget);
  s["--objective"] = o.solver.objective == Objective::Latency ? "latency" : "throughput";
  s["--types"] = to_string(space.types);
  s["--groups"] = to_string(space.candidates.groups);
  s["--population"] = std::to_string(o.population);
  s["--mutations"] = std::to_string(o.mutations);
  s["--crossovers"] = std::to_string(o.crossovers);
  s["--mutation-rate"] = number(o.mutation_rate);
  s["--mac-ratio"] = number(o.prior.mac_ratio);
  s["--mac-sigma"] = number(o.prior.sigma);
  s["--max-tries"] = std::to_string(o.max_tries);
  s["--max-initial"] = std::to_string(o.max_initial);
  s["--layer-drop"] = number(o.layer_drop);
  s["--min-accuracy"] = number(o.min_accuracy);
  s["--warmup"] = std::to_string(o.warmup);
  s["--verify"] = std::to_string(o.verify);
  s["--trees"] = std::to_string(o.forest.trees);
  s["--sim-pregate"] = number(o.sim_pregate);
  s["--final-verify"] = o.final_verify ? "yes" : "no";
  s["--seeded-start"] = o.seeded_start ? "yes" : "no";
  s["--finalists"] = std::to_string(o.finalists);
  s["--finalist-images"] = std::to_string(o.finalist_images);
  s["--seed"] = std::to_string(o.seed);
  return s;
}

std::map<std::string, std::string> file_headers(const arch::Design& base, const Settings& settings,
                                                const std::vector<std::string>& features) {
  std::map<std::string, std::string> h;
  h["candidates.csv"] =
      "row,generation,kind,slot,attempt,genome,macs,params,weight_mbit,fps_analytical,fps_oracle,fps_systemc,dsp,"
      "bram18,uram,lut,ff,batch,accuracy,status\n";
  h["generations.csv"] =
      "generation,batch,tried,valid,queries,best_accuracy,best_fps,best_verified_accuracy,mean_accuracy,labels,"
      "forest_mape,forest_false_accept,hypervolume,rejected_macs,rejected_resources,rejected_fps,rejected_floor,"
      "rejected_other,duplicates\n";
  h["timing.csv"] = "row,generation,seconds_hardware,seconds_systemc,seconds_accuracy\n";
  h["wall.csv"] = "generation,seconds\n";
  const auto spec = settings.count("network") ? settings.at("network") : base.network_spec;
  std::string l = "# mixtd dataset v1 network=" + spec + " device=" + base.device_spec + " source=mixtd-search\n";
  l += "index,seed,status";
  for (const auto& f : features) l += "," + f;
  for (const auto& t : target_names()) l += "," + t;
  h["labels.csv"] = l + "\n";
  return h;
}

std::string candidate_row(std::int64_t row, std::int64_t g, const Outcome& o, const HardwareEval* e,
                          std::int64_t batch) {
  std::string r = std::to_string(row) + "," + std::to_string(g) + "," + o.kind + "," + std::to_string(o.slot) + "," +
                  std::to_string(o.attempt) + "," + SearchSpace::key(o.genome);
  if (e) {
    field(r, number(e->macs));
    field(r, number(e->params));
    field(r, number(e->weight_bits / 1e6));
    const bool solved = e->fits;
    field(r, solved ? number(e->fps_analytical) : std::string());
    field(r, o.fps_oracle > 0 ? number(o.fps_oracle) : std::string());
    field(r, o.fps_sim > 0 ? number(o.fps_sim) : std::string());
    for (double v : {e->dsp, e->bram18, e->uram, e->lut, e->ff}) field(r, solved ? number(v) : std::string());
  } else {
    r += ",,,,,,,,,,,";
  }
  field(r, std::to_string(batch));
  field(r, o.accuracy >= 0 ? number(o.accuracy) : std::string());
  std::string status = o.status;
  for (char& c : status)
    if (c == ',' || c == '\n' || c == '"') c = ' ';
  field(r, status);
  return r + "\n";
}

std::string generation_row(const GenerationStats& s) {
  auto opt = [](double v) { return v < 0 ? std::string() : number(v); };
  auto rej = [&](const std::string& k) {
    const auto it = s.rejected.find(k);
    return std::to_string(it == s.rejected.end() ? 0 : it->second);
  };
  std::int64_t other = 0;
  for (const auto& [k, v] : s.rejected)
    if (k != "rejected: macs" && k != "rejected: resources" && k != "rejected: fps" &&
        k != "rejected: accuracy floor" && k != "duplicate")
      other += v;
  return std::to_string(s.generation) + "," + std::to_string(s.batch) + "," + std::to_string(s.tried) + "," +
         std::to_string(s.valid) + "," + std::to_string(s.queries) + "," + opt(s.best_accuracy) + "," +
         opt(s.best_accuracy < 0 ? -1 : s.best_fps) + "," + opt(s.best_verified_accuracy) + "," +
         opt(s.best_accuracy < 0 ? -1 : s.mean_accuracy) + "," + std::to_string(s.labels) + "," + opt(s.forest_mape) +
         "," + opt(s.forest_false_accept) + "," + opt(s.hypervolume) + "," + rej("rejected: macs") + "," +
         rej("rejected: resources") + "," + rej("rejected: fps") + "," + rej("rejected: accuracy floor") + "," +
         std::to_string(other) + "," + rej("duplicate") + "\n";
}

std::string label_row(std::size_t index, const std::string& key, const SimLabel& l,
                      const std::vector<double>& features) {
  std::string r = std::to_string(index);
  field(r, std::to_string(hash_string(key) >> 11));
  r += ',';
  if (!l.ok) {
    std::string e = "failed: ";
    e += l.error.substr(0, l.error.find('\n'));
    for (char& c : e)
      if (c == ',' || c == '"') c = ' ';
    r += e;
    for (std::size_t i = 0; i < features.size() + target_names().size(); ++i) r += ",";
    return r + "\n";
  }
  r += "ok";
  for (double v : features) field(r, number(v));
  for (double v : {l.interval, l.latency, l.fps_batch1, l.fps_peak}) field(r, number(v));
  return r + "\n";
}

double macs_constant(const SearchSpace& space, HardwareCache& hw, double mac_ratio) {
  Genome mid = space.undecomposed();
  for (std::size_t i = 0; i < space.size(); ++i) {
    const auto& c = space.layers()[i].candidates;
    std::size_t best = c.size() - 1;
    for (std::size_t k = 0; k < c.size(); ++k)
      if (std::fabs(c[k].mac_ratio - mac_ratio) < std::fabs(c[best].mac_ratio - mac_ratio)) best = k;
    mid[i] = static_cast<std::int32_t>(best);
  }
  for (const Genome& g : {mid, space.undecomposed()}) {
    const HardwareEval& e = hw.evaluate(g, 0);
    if (e.fits) return e.fps_analytical * e.macs;
  }
  throw Error("--oracle macs: neither the design at --mac-ratio " + number(mac_ratio) +
              " nor the undecomposed one fits the budget, so FPS cannot be calibrated against MACs");
}

double hv_scale(const std::vector<Member>& pool, double target) {
  if (target > 0) return target;
  double m = 0;
  for (const auto& p : pool) m = std::max(m, p.fps);
  return m > 0 ? m : 1;
}

// --- the checkpoint ----------------------------------------------------------

namespace {

json member_json(const Member& m) { return json::array({SearchSpace::key(m.genome), m.accuracy, m.fps, m.fps_sim}); }

Genome genome_of(const std::string& key) {
  Genome g;
  std::size_t p = 0;
  while (p <= key.size()) {
    const std::size_t q = key.find('.', p);
    g.push_back(static_cast<std::int32_t>(std::stol(key.substr(p, q - p))));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return g;
}

json stats_json(const GenerationStats& s) {
  return json{{"g", s.generation},
              {"b", s.batch},
              {"tried", s.tried},
              {"valid", s.valid},
              {"q", s.queries},
              {"rej", s.rejected},
              {"best", s.best_accuracy},
              {"fps", s.best_fps},
              {"mean", s.mean_accuracy},
              {"ver", s.best_verified_accuracy},
              {"labels", s.labels},
              {"mape", s.forest_mape},
              {"fa", s.forest_false_accept},
              {"hv", s.hypervolume},
              {"t", s.seconds}};
}

GenerationStats stats_of(const json& j) {
  GenerationStats s;
  s.generation = j.at("g");
  s.batch = j.at("b");
  s.tried = j.at("tried");
  s.valid = j.at("valid");
  s.queries = j.at("q");
  s.rejected = j.at("rej").get<std::map<std::string, std::int64_t>>();
  s.best_accuracy = j.at("best");
  s.best_fps = j.at("fps");
  s.mean_accuracy = j.at("mean");
  s.best_verified_accuracy = j.at("ver");
  s.labels = j.at("labels");
  s.forest_mape = j.at("mape");
  s.forest_false_accept = j.at("fa");
  s.hypervolume = j.at("hv");
  s.seconds = j.at("t");
  return s;
}

}  // namespace

std::string checkpoint_json(const State& st, const Settings& settings, const std::map<std::string, HardwareEval>& hw) {
  json j;
  j["format"] = "mixtd-search-checkpoint-1";
  j["settings"] = settings;
  j["generation"] = st.generation;
  j["prefilter_done"] = st.prefilter_done;
  j["base_accuracy"] = st.base_accuracy;
  j["prefilter"] = st.prefilter;
  j["keep"] = st.keep;
  j["errors"] = st.errors;
  json pop = json::array();
  for (const auto& m : st.population) pop.push_back(member_json(m));
  j["population"] = pop;
  json memo = json::array();
  for (const auto& [k, v] : st.memo) memo.push_back(json::array({k.first, k.second, v}));
  j["memo"] = memo;
  json labels = json::array();
  for (const auto& key : st.label_order) {
    const SimLabel& l = st.labels.at(key);
    labels.push_back(json::array({key, l.ok, l.error, l.interval, l.latency, l.fps_batch1, l.fps_peak}));
  }
  j["labels"] = labels;
  json h = json::array();
  for (const auto& [k, e] : hw)
    h.push_back(json::array({k, e.macs, e.params, e.weight_bits, e.macs_ok, e.fits, e.reason, e.utilisation,
                             e.fps_analytical, e.fps_peak, e.dsp, e.bram18, e.uram, e.lut, e.ff, e.solved}));
  j["hardware"] = h;
  j["queries"] = st.queries;
  j["prefilter_queries"] = st.prefilter_queries;
  j["evaluated"] = st.evaluated;
  j["evaluated_rows"] = st.evaluated_rows;
  j["macs_constant"] = st.macs_constant;
  j["hv_fps_scale"] = st.hv_fps_scale;
  json hist = json::array();
  for (const auto& s : st.history) hist.push_back(stats_json(s));
  j["history"] = hist;
  j["file_sizes"] = st.file_sizes;
  j["seconds"] = st.seconds;
  j["stalled"] = st.stalled;
  j["best_seen"] = st.best_seen;
  j["stop_reason"] = st.stop_reason;
  json seeds = json::array();
  for (const auto& [kind, m] : st.seeds) seeds.push_back(json::array({kind, member_json(m)}));
  j["seeds"] = seeds;
  json ft = json::array();
  for (const auto& [k, v] : st.finetuned) ft.push_back(json::array({k.first, k.second, v}));
  j["finetuned"] = ft;
  return j.dump() + "\n";
}

void read_checkpoint(const std::filesystem::path& path, const Settings& expected, State& st,
                     std::map<std::string, HardwareEval>& hw) {
  json j;
  try {
    j = json::parse(read_file(path));
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not a readable checkpoint (" + e.what() + "); start afresh in another folder");
  }
  require(j.value("format", "") == "mixtd-search-checkpoint-1",
          path.string() + ": not a mixtd search checkpoint (format '" + j.value("format", "") + "')");
  try {
    const auto saved = j.at("settings").get<Settings>();
    for (const auto& [k, v] : expected) {
      const auto it = saved.find(k);
      const std::string was = it == saved.end() ? "(not set)" : it->second;
      require(was == v, path.parent_path().string() + ": this search was started with " + k + " " + was + ", not " + v +
                            " (resume with the same settings, or use another -o)");
    }
    for (const auto& [k, v] : saved)
      require(expected.count(k),
              path.parent_path().string() + ": this search was started with " + k + " " + v +
                  ", which this run does not set (resume with the same settings, or use another -o)");
    st.generation = j.at("generation");
    st.prefilter_done = j.at("prefilter_done");
    st.base_accuracy = j.at("base_accuracy");
    st.prefilter = j.at("prefilter").get<std::vector<std::vector<double>>>();
    st.keep = j.at("keep").get<std::vector<std::vector<bool>>>();
    st.errors = j.at("errors").get<std::vector<std::vector<double>>>();
    for (const auto& m : j.at("population")) st.population.push_back({genome_of(m.at(0)), m.at(1), m.at(2), m.at(3)});
    for (const auto& m : j.at("memo")) st.memo[{m.at(0).get<std::string>(), m.at(1).get<std::int64_t>()}] = m.at(2);
    for (const auto& s : j.at("seeds")) {
      const json& m = s.at(1);
      st.seeds.emplace_back(s.at(0).get<std::string>(), Member{genome_of(m.at(0)), m.at(1), m.at(2), m.at(3)});
    }
    for (const auto& f : j.at("finetuned"))
      st.finetuned[{f.at(0).get<std::string>(), f.at(1).get<std::int64_t>()}] = f.at(2);
    for (const auto& l : j.at("labels")) {
      const std::string key = l.at(0);
      st.labels[key] = SimLabel{l.at(1), l.at(2), l.at(3), l.at(4), l.at(5), l.at(6)};
      st.label_order.push_back(key);
    }
    for (const auto& e : j.at("hardware")) {
      HardwareEval h;
      h.macs = e.at(1);
      h.params = e.at(2);
      h.weight_bits = e.at(3);
      h.macs_ok = e.at(4);
      h.fits = e.at(5);
      h.reason = e.at(6);
      h.utilisation = e.at(7);
      h.fps_analytical = e.at(8);
      h.fps_peak = e.at(9);
      h.dsp = e.at(10);
      h.bram18 = e.at(11);
      h.uram = e.at(12);
      h.lut = e.at(13);
      h.ff = e.at(14);
      h.solved = e.at(15);
      hw[e.at(0).get<std::string>()] = h;
    }
    st.queries = j.at("queries");
    st.prefilter_queries = j.at("prefilter_queries");
    st.evaluated = j.at("evaluated");
    st.evaluated_rows = j.at("evaluated_rows");
    st.macs_constant = j.at("macs_constant");
    st.hv_fps_scale = j.at("hv_fps_scale");
    for (const auto& s : j.at("history")) st.history.push_back(stats_of(s));
    st.file_sizes = j.at("file_sizes").get<std::map<std::string, std::uint64_t>>();
    st.seconds = j.at("seconds");
    st.stalled = j.at("stalled");
    st.best_seen = j.at("best_seen");
    st.stop_reason = j.at("stop_reason");
  } catch (const json::exception& e) {
    throw Error(path.string() + ": damaged checkpoint (" + e.what() + "); start afresh in another folder");
  }
}

}  // namespace mixtd::search::detail
