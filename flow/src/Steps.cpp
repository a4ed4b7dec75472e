#include "mixtd/flow/Steps.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

namespace mixtd::flow {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw Error(p.string() + ": missing");
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error(p.string() + ": not JSON (" + e.what() + ")");
  }
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

std::string pct(const nlohmann::json& j) { return fixed(100 * j.value("top1", 0.0), 2) + "%"; }

// The data options every data-carrying command takes.
void add_data(std::vector<std::string>& a, const FlowConfig& c) {
  if (!c.dataset.empty()) a.insert(a.end(), {"--dataset", c.dataset});
}

void add_weights(std::vector<std::string>& a, const FlowConfig& c) {
  if (!c.weights.empty()) a.insert(a.end(), {"--weights", c.weights});
}

// Whether the finetune step fine-tunes (else the final design is best.yaml).
bool finetunes(const FlowConfig& c) { return c.finetune_epochs > 0 && !c.dataset.empty(); }

// The network the search starts from: the trained one, else the flow's.
std::string network_of(const FlowConfig& c) { return c.train_epochs > 0 ? "network/trained.onnx" : c.network; }

Step network_step(const FlowConfig& c) {
  Step s;
  s.name = "network";
  if (!net::is_zoo_spec(c.network)) s.inputs.push_back(c.network);
  if (!c.weights.empty()) s.inputs.push_back(c.weights);
  if (c.train_epochs > 0) {
    Command t;
    t.args = {"train",    c.network,
              "--epochs", std::to_string(c.train_epochs),
              "--lr",     fixed(c.train_lr, 6),
              "-o",       "network/trained.onnx"};
    add_data(t.args, c);
    t.resume_args = {"--resume"};
    t.resume_when = "network/trained.onnx.ckpt";
    s.commands.push_back(t);
    s.outputs.push_back("network/trained.onnx");
    s.resumable = true;
  }
  if (!c.dataset.empty()) {
    for (const bool is_float : {true, false}) {
      Command a;
      a.args = {"accuracy", network_of(c), "--full", "--json"};
      if (c.train_epochs == 0) add_weights(a.args, c);
      add_data(a.args, c);
      if (is_float) a.args.push_back("--float");
      a.stdout_file = is_float ? "network/accuracy-float.json" : "network/accuracy-bfp8.json";
      s.commands.push_back(a);
      s.outputs.push_back(a.stdout_file);
    }
    s.summarise = [](const fs::path& d) {
      return "top-1 " + pct(read_json(d / "network/accuracy-float.json")) + " float, " +
             pct(read_json(d / "network/accuracy-bfp8.json")) + " BFP8 on the full test set";
    };
  } else {
    Command check;
    check.args = {"info", network_of(c)};
    check.stdout_file = "network/info.txt";
    s.commands.push_back(check);
    s.outputs.push_back(check.stdout_file);
    s.summarise = [net = c.network](const fs::path&) { return net + " loads (no data set: accuracy by fidelity)"; };
  }
  return s;
}

Step search_step(const FlowConfig& c) {
  Step s;
  s.name = "search";
  const SearchSettings& o = c.search;
  Command a;
  a.args = {"search",
            network_of(c),
            "--device",
            c.device,
            "--target-fps",
            fixed(c.target_fps, 3),
            "--budget",
            fixed(c.budget, 6),
            "--oracle",
            o.oracle,
            "--accuracy",
            o.accuracy,
            "--types",
            o.types,
            "--population",
            std::to_string(o.population),
            "--mutations",
            std::to_string(o.mutations),
            "--crossovers",
            std::to_string(o.crossovers),
            "--generations",
            std::to_string(o.generations),
            "--patience",
            std::to_string(o.patience),
            "--layer-drop",
            fixed(o.layer_drop, 6),
            "--seed",
            std::to_string(o.seed),
            "--finetune-epochs",
            "0",
            "-j",
            std::to_string(c.jobs),
            "-o",
            "search"};
  if (c.train_epochs == 0) add_weights(a.args, c);
  if (o.accuracy == "top1") add_data(a.args, c);
  if (o.batch > 0) a.args.insert(a.args.end(), {"--batch", std::to_string(o.batch)});
  if (o.search_size > 0) a.args.insert(a.args.end(), {"--search-size", std::to_string(o.search_size)});
  if (o.finalists) a.args.insert(a.args.end(), {"--finalists", std::to_string(*o.finalists)});
  if (o.finalist_images) a.args.insert(a.args.end(), {"--finalist-images", std::to_string(*o.finalist_images)});
  a.resume_args = {"--resume"};
  a.resume_when = "search/checkpoint.json";
  s.commands.push_back(a);
  s.outputs = {"search/best.yaml", "search/summary.json", "search/generations.csv", "search/candidates.csv"};
  s.resumable = true;
  s.check = [target = c.target_fps, budget = c.budget](const fs::path& d) {
    const auto j = read_json(d / "search/summary.json");
    if (!j.contains("best") || !j["best"].is_object())
      throw Error("no design in the search space reaches target_fps " + fixed(target, 0) + " within budget " +
                  fixed(budget, 2) + " (the search stopped: " + j.value("stop_reason", std::string("?")) +
                  "); lower target_fps or raise the budget");
  };
  s.summarise = [](const fs::path& d) {
    const auto j = read_json(d / "search/summary.json");
    std::ostringstream l;
    l << j.value("generations", 0) << " generations, " << j.value("evaluated", 0) << " designs evaluated; best ";
    if (j.contains("best") && j["best"].is_object()) {
      const auto& b = j["best"];
      const double sc = b.value("fps_systemc", 0.0);
      l << "fitness " << fixed(100 * b.value("fitness", 0.0), 2) << "% at "
        << fixed(sc > 0 ? sc : b.value("fps_analytical", 0.0), 0) << " FPS (" << (sc > 0 ? "SystemC" : "analytical")
        << ")";
    } else {
      l << "none found (" << j.value("stop_reason", std::string("?")) << ")";
    }
    return l.str();
  };
  return s;
}

// best.yaml with its network replaced by the fine-tuned one (same τ and ψ)
// and naming the trained factors, which the later steps then compute with
// exactly (decomposing finetuned.onnx again would give other CPD factors).
void write_final_design(const fs::path& dir, bool finetuned) {
  arch::Design d = arch::load_design((dir / "search/best.yaml").string());
  fs::create_directories(dir / "finetune");
  if (finetuned) {
    d.network = net::load_network((dir / "finetune/finetuned.onnx").string(), false);
    arch::save_design_with_weights(d, dir / kFinalDesign, dir / "finetune/finetuned.onnx",
                                   dir / "finetune/finetuned.factors");
    return;
  }
  // Keep the network where best.yaml names it, now seen from finetune/.
  const fs::path spec(d.network_spec);
  if (!net::is_zoo_spec(d.network_spec) && spec.is_relative())
    d.network_spec = fs::relative(fs::absolute(dir / "search" / spec), fs::absolute(dir / "finetune")).string();
  arch::save_design(d, (dir / kFinalDesign).string());
}

Step finetune_step(const FlowConfig& c) {
  Step s;
  s.name = "finetune";
  const bool tune = finetunes(c);
  if (tune) {
    Command f;
    f.args = {"finetune",     "search/best.yaml",
              "--epochs",     std::to_string(c.finetune_epochs),
              "--max-images", std::to_string(c.finetune_images),
              "--lr",         fixed(c.finetune_lr, 8),
              "-o",           "finetune/finetuned.onnx",
              "--factors",    "finetune/finetuned.factors"};
    add_data(f.args, c);
    s.commands.push_back(f);
    s.outputs.insert(s.outputs.end(), {"finetune/finetuned.onnx", "finetune/finetuned.factors"});
  }
  // The tag is what the step's hash covers of this command: a new one when
  // the final design came to name the factors, so older flows rerun.
  Command w;
  w.tag = tune ? "final design: best.yaml on finetuned.onnx and finetuned.factors" : "final design: best.yaml";
  w.in_process = [tune](const fs::path& d) { write_final_design(d, tune); };
  s.commands.push_back(w);
  s.outputs.push_back(kFinalDesign);
  if (!c.dataset.empty()) {
    for (const bool after : {false, true}) {
      Command a;
      a.args = {"accuracy", after ? kFinalDesign : "search/best.yaml", "--full", "--json"};
      add_data(a.args, c);
      a.stdout_file = after ? "finetune/accuracy-finetuned.json" : "finetune/accuracy-decomposed.json";
      if (after && !tune) continue;
      s.commands.push_back(a);
      s.outputs.push_back(a.stdout_file);
    }
    s.summarise = [tune](const fs::path& d) {
      std::string l = "decomposed " + pct(read_json(d / "finetune/accuracy-decomposed.json"));
      if (tune) l += ", fine-tuned " + pct(read_json(d / "finetune/accuracy-finetuned.json"));
      return l + " top-1 (BFP8, full test set)";
    };
  } else {
    s.summarise = [](const fs::path&) { return std::string("no data set: the searched design as it is"); };
  }
  return s;
}

Step simulate_step(const FlowConfig& c) {
  Step s;
  s.name = "simulate";
  Command r;
  r.args = {"report", kFinalDesign, "--json"};
  r.stdout_file = "simulate/analysis.json";
  Command a;
  a.args = {"simulate", kFinalDesign, "--functional", "--frames", std::to_string(c.simulate_frames), "--json"};
  add_data(a.args, c);
  a.stdout_file = "simulate/simulate.json";
  s.commands = {r, a};
  s.outputs = {"simulate/analysis.json", "simulate/simulate.json"};
  // What the final design names from the finetune step: this step's hash,
  // and so every later one's, changes with their contents (a fine-tune rerun
  // by --force finetune keeps its hash but not its weights).
  if (finetunes(c)) s.products = {"finetune/finetuned.onnx", "finetune/finetuned.factors"};
  s.check = [](const fs::path& d) {
    const auto j = read_json(d / "simulate/simulate.json");
    if (!j.value("completed", false))
      throw Error("the SystemC simulation did not complete: " + j.value("error", std::string("(no reason)")));
    if (!j.value("outputs_match", false))
      throw Error("SystemC's outputs differ from the golden executor's: " + j.value("mismatch", std::string()));
  };
  s.summarise = [target = c.target_fps](const fs::path& d) {
    const auto j = read_json(d / "simulate/simulate.json");
    const double fps = j.value("fps_batch1", 0.0);
    return "SystemC " + fixed(fps, 0) + " FPS batch 1 (" + (fps >= target ? "meets" : "BELOW") + " the target " +
           fixed(target, 0) + "), outputs equal the golden executor's";
  };
  return s;
}

Step rtl_step(const FlowConfig& c) {
  Step s;
  s.name = "rtl";
  Command g;
  g.args = {"gen-rtl", kFinalDesign, "-o", "rtl"};
  add_data(g.args, c);
  s.commands = {g};
  s.outputs = {"rtl/mixtd_top.sv", "rtl/files.f"};
  s.summarise = [](const fs::path& d) {
    std::int64_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(d / "rtl")) files += e.is_regular_file();
    return std::to_string(files) + " files in rtl/ (mixtd_top.sv, lib/, mem/)";
  };
  return s;
}

Step cosim_step(const FlowConfig& c) {
  Step s;
  s.name = "cosim";
  if (c.cosim_frames == 0) {
    s.skipped = true;
    s.skip_reason = "cosim.frames is 0";
    return s;
  }
  Command a;
  a.args = {"cosim", kFinalDesign, "--frames", std::to_string(c.cosim_frames), "--json", "-j", std::to_string(c.jobs)};
  add_data(a.args, c);
  a.stdout_file = "cosim/cosim.json";
  s.commands = {a};
  s.outputs = {"cosim/cosim.json"};
  s.check = [](const fs::path& d) {
    const auto j = read_json(d / "cosim/cosim.json");
    if (!j.value("outputs_match", false))
      throw Error("the RTL's outputs differ from the golden executor's: " + j.value("mismatch", std::string()));
  };
  s.summarise = [](const fs::path& d) {
    const auto j = read_json(d / "cosim/cosim.json");
    std::string l = "RTL outputs equal the golden executor's";
    if (j.contains("latency") && j["latency"].is_array() && !j["latency"].empty())
      l += ", frame latency " + std::to_string(j["latency"][0].get<std::int64_t>()) + " cycles";
    return l;
  };
  return s;
}

Step package_step(const FlowConfig& c) {
  Step s;
  s.name = "package";
  Command p;
  p.args = {"package",    kFinalDesign, "-o",       "package",
            "--platform", c.platform,   "--frames", std::to_string(std::max<std::int64_t>(1, c.package_frames))};
  if (c.kernel_mhz > 0) p.args.insert(p.args.end(), {"--kernel-mhz", fixed(c.kernel_mhz, 3)});
  add_data(p.args, c);
  s.commands = {p};
  s.outputs = {"package/Makefile", "package/kernel.xml", "package/data/weights.bin"};
  s.summarise = [](const fs::path& d) {
    std::int64_t files = 0, bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(d / "package"))
      if (e.is_regular_file()) {
        ++files;
        bytes += static_cast<std::int64_t>(e.file_size());
      }
    return std::to_string(files) + " files, " + std::to_string(bytes / 1024) +
           " KiB in package/ (make xclbin host run on a Vitis machine)";
  };
  return s;
}

}  // namespace

const std::vector<std::string>& step_names() {
  static const std::vector<std::string> n = {"network", "search", "finetune", "simulate",
                                             "rtl",     "cosim",  "package",  "report"};
  return n;
}

std::vector<Step> plan_steps(const FlowConfig& c) {
  return {network_step(c), search_step(c), finetune_step(c), simulate_step(c),
          rtl_step(c),     cosim_step(c),  package_step(c)};
}

}  // namespace mixtd::flow
