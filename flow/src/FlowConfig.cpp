#include "mixtd/flow/FlowConfig.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "mixtd/arch/Device.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/Error.h"

namespace mixtd::flow {

namespace fs = std::filesystem;

namespace {

struct Reader {
  std::string source;
  fs::path base;

  std::string at(const YAML::Node& n) const {
    const int line = n.Mark().line;
    return source + ":" + (line >= 0 ? std::to_string(line + 1) : std::string("1")) + ": ";
  }
  static std::string show(const YAML::Node& n) {
    return n.IsScalar() ? "'" + n.Scalar() + "'" : n.IsMap() ? "a mapping" : n.IsSequence() ? "a list" : "nothing";
  }
  std::string text(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar() && !n.Scalar().empty()) return n.Scalar();
    throw Error(at(n) + key + " must be a string, got " + show(n));
  }
  double number(const YAML::Node& n, const std::string& key, double lo, double hi) const {
    double v = NAN;
    if (n.IsScalar()) try {
        std::size_t used = 0;
        v = std::stod(n.Scalar(), &used);
        if (used != n.Scalar().size()) v = NAN;
      } catch (const std::exception&) {
      }
    if (!std::isfinite(v)) throw Error(at(n) + key + " must be a number, got " + show(n));
    if (v < lo || v > hi) {
      std::ostringstream s;
      s << at(n) << key << " = " << n.Scalar() << ": legal " << lo << " .. " << hi;
      throw Error(s.str());
    }
    return v;
  }
  std::int64_t integer(const YAML::Node& n, const std::string& key, std::int64_t lo, std::int64_t hi) const {
    long long v = 0;
    bool ok = false;
    if (n.IsScalar()) try {
        std::size_t used = 0;
        v = std::stoll(n.Scalar(), &used);
        ok = used == n.Scalar().size();
      } catch (const std::exception&) {
      }
    if (!ok) throw Error(at(n) + key + " must be an integer, got " + show(n));
    if (v < lo || v > hi)
      throw Error(at(n) + key + " = " + n.Scalar() + ": legal " + std::to_string(lo) + " .. " + std::to_string(hi));
    return v;
  }
  std::string choice(const YAML::Node& n, const std::string& key, const std::vector<std::string>& legal) const {
    const std::string v = text(n, key);
    std::string all;
    for (const auto& l : legal) {
      if (l == v) return v;
      all += (all.empty() ? "" : " | ") + l;
    }
    throw Error(at(n) + key + " = '" + v + "': legal " + all);
  }
  // An existing file, relative to the flow's folder.
  std::string file(const YAML::Node& n, const std::string& key) const {
    const fs::path p = text(n, key);
    const fs::path full = p.is_absolute() ? p : (base / p).lexically_normal();
    std::error_code ec;  // a name too long for the file system is no file either
    if (!fs::is_regular_file(full, ec))
      throw Error(at(n) + key + " '" + p.string() + "': no such file (" + full.string() + ")");
    return full.string();
  }
  // The mapping's keys, each at most once and each one of `legal`; calls
  // `take` for every entry.
  void entries(const YAML::Node& map, const std::string& where, const std::vector<std::string>& legal,
               const std::function<void(const std::string&, const YAML::Node&)>& take) const {
    if (!map.IsMap()) throw Error(at(map) + where + " must be a mapping, got " + show(map));
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string k = kv.first.Scalar();
      if (std::find(legal.begin(), legal.end(), k) == legal.end()) {
        std::string all;
        for (const auto& l : legal) all += (all.empty() ? "" : ", ") + l;
        throw Error(at(kv.first) + "unknown key '" + k + "' in " + where + " (legal: " + all + ")");
      }
      if (!seen.insert(k).second) throw Error(at(kv.first) + "'" + k + "' given twice in " + where);
      take(k, kv.second);
    }
  }
};

// A data set spec with its paths made absolute (relative to the flow).
std::string resolve_dataset(const Reader& r, const YAML::Node& n) {
  const std::string spec = r.text(n, "dataset");
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  std::string out = spec.substr(0, colon + 1), rest = spec.substr(colon + 1);
  std::stringstream parts(rest);
  bool first = true;
  for (std::string p; std::getline(parts, p, ',');) {
    const fs::path path(p);
    if (!first) out += ',';
    out += path.is_absolute() ? p : (r.base / path).lexically_normal().string();
    first = false;
  }
  return out;
}

}  // namespace

FlowConfig load_flow(const fs::path& file) {
  FlowConfig c;
  c.source = file;
  // Paths in the flow resolve against its folder, made absolute: the steps
  // run in the output folder (Runner.cpp), so a path relative to where
  // `mixtd flow` was typed would not be found there.
  Reader r{file.string(), fs::absolute(file).parent_path()};
  if (!fs::is_regular_file(file)) throw Error(file.string() + ": no such file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw Error(r.source + ":" + std::to_string(e.mark.line + 1) + ": not YAML: " + e.msg);
  }
  if (!root.IsMap())
    throw Error(r.source + ":1: a flow is a mapping (name, network, dataset, device, target_fps, ...)");
  c.name = file.stem().string();
  bool have_network = false, have_device = false, have_target = false;
  const YAML::Node* train = nullptr;
  YAML::Node train_node;
  r.entries(root, "the flow",
            {"name", "network", "weights", "train", "dataset", "device", "target_fps", "budget", "search", "finetune",
             "simulate", "cosim", "package", "jobs"},
            [&](const std::string& k, const YAML::Node& v) {
              if (k == "name") {
                c.name = r.text(v, "name");
              } else if (k == "network") {
                const std::string spec = r.text(v, "network");
                c.network = net::is_zoo_spec(spec) ? spec : r.file(v, "network");
                have_network = true;
              } else if (k == "weights") {
                c.weights = r.file(v, "weights");
              } else if (k == "train") {
                train_node = v;
                train = &train_node;
                r.entries(v, "train", {"epochs", "lr"}, [&](const std::string& t, const YAML::Node& x) {
                  if (t == "epochs") c.train_epochs = r.integer(x, "train.epochs", 1, 1000);
                  if (t == "lr") c.train_lr = r.number(x, "train.lr", 1e-7, 10);
                });
              } else if (k == "dataset") {
                c.dataset = resolve_dataset(r, v);
              } else if (k == "device") {
                const std::string spec = r.text(v, "device");
                const fs::path p(spec);
                c.device = p.extension() == ".yaml" ? r.file(v, "device") : spec;
                try {
                  arch::load_device(c.device);
                } catch (const Error& e) {
                  throw Error(r.at(v) + "device: " + e.what());
                }
                have_device = true;
              } else if (k == "target_fps") {
                c.target_fps = r.number(v, "target_fps", 1e-3, 1e9);
                have_target = true;
              } else if (k == "budget") {
                c.budget = r.number(v, "budget", 0.01, 1);
              } else if (k == "search") {
                SearchSettings& s = c.search;
                r.entries(v, "search",
                          {"oracle", "accuracy", "types", "population", "mutations", "crossovers", "generations",
                           "patience", "batch", "search_size", "layer_drop", "seed", "finalists", "finalist_images"},
                          [&](const std::string& t, const YAML::Node& x) {
                            const std::string key = "search." + t;
                            if (t == "oracle") s.oracle = r.choice(x, key, {"macs", "analytical", "forest", "systemc"});
                            if (t == "accuracy") s.accuracy = r.choice(x, key, {"top1", "fidelity"});
                            if (t == "types") s.types = r.choice(x, key, {"mixed", "svd", "cpd"});
                            if (t == "population") s.population = r.integer(x, key, 2, 10000);
                            if (t == "mutations") s.mutations = r.integer(x, key, 0, 100000);
                            if (t == "crossovers") s.crossovers = r.integer(x, key, 0, 100000);
                            if (t == "generations") s.generations = r.integer(x, key, 1, 100000);
                            if (t == "patience") s.patience = r.integer(x, key, 0, 100000);
                            if (t == "batch") s.batch = r.integer(x, key, 1, 100000);
                            if (t == "search_size") s.search_size = r.integer(x, key, 1, 100000000);
                            if (t == "layer_drop") s.layer_drop = r.number(x, key, -1, 100);
                            if (t == "seed") s.seed = static_cast<std::uint64_t>(r.integer(x, key, 0, 1LL << 62));
                            if (t == "finalists") s.finalists = r.integer(x, key, 0, 1000);
                            if (t == "finalist_images") s.finalist_images = r.integer(x, key, 1, 100000000);
                          });
              } else if (k == "finetune") {
                r.entries(v, "finetune", {"epochs", "images", "lr"}, [&](const std::string& t, const YAML::Node& x) {
                  if (t == "epochs") c.finetune_epochs = r.integer(x, "finetune.epochs", 0, 1000);
                  if (t == "images") c.finetune_images = r.integer(x, "finetune.images", 0, 100000000);
                  if (t == "lr") c.finetune_lr = r.number(x, "finetune.lr", 1e-9, 10);
                });
              } else if (k == "simulate") {
                r.entries(v, "simulate", {"frames"}, [&](const std::string&, const YAML::Node& x) {
                  c.simulate_frames = r.integer(x, "simulate.frames", 2, 1000);
                });
              } else if (k == "cosim") {
                r.entries(v, "cosim", {"frames"}, [&](const std::string&, const YAML::Node& x) {
                  c.cosim_frames = r.integer(x, "cosim.frames", 0, 100);
                });
              } else if (k == "package") {
                r.entries(v, "package", {"platform", "kernel_mhz", "frames"},
                          [&](const std::string& t, const YAML::Node& x) {
                            if (t == "platform") c.platform = r.text(x, "package.platform");
                            if (t == "kernel_mhz") c.kernel_mhz = r.number(x, "package.kernel_mhz", 10, 1000);
                            if (t == "frames") c.package_frames = r.integer(x, "package.frames", 0, 100000);
                          });
              } else if (k == "jobs") {
                c.jobs = r.integer(v, "jobs", 1, 256);
              }
            });
  if (!have_network) throw Error(r.source + ":1: missing 'network' (a zoo name, a .yaml or an .onnx path)");
  if (!have_device) throw Error(r.source + ":1: missing 'device' (u250, zcu102, zc706 or a device .yaml)");
  if (!have_target) throw Error(r.source + ":1: missing 'target_fps' (the batch-1 FPS the design must reach)");
  if (c.dataset.empty() && c.search.accuracy == "top1")
    throw Error(r.source + ":1: search.accuracy top1 needs a 'dataset' (or set search.accuracy: fidelity)");
  if (c.search.accuracy == "fidelity" && c.search.finalists.value_or(0) > 0)
    throw Error(r.source + ":1: search.finalists " + std::to_string(*c.search.finalists) +
                ": the finalists are fine-tuned on the dataset, search.accuracy fidelity has none (legal 0)");
  if (train && !c.weights.empty())
    throw Error(r.at(*train) + "train: the flow has 'weights' already; give one or the other");
  if (train && c.dataset.empty()) throw Error(r.at(*train) + "train: needs a 'dataset'");
  return c;
}

std::string FlowConfig::canonical() const {
  std::ostringstream s;
  s.precision(17);
  s << "name=" << name << "\nnetwork=" << network << "\nweights=" << weights << "\ntrain_epochs=" << train_epochs
    << "\ntrain_lr=" << train_lr << "\ndataset=" << dataset << "\ndevice=" << device << "\ntarget_fps=" << target_fps
    << "\nbudget=" << budget << "\nsearch=" << search.oracle << "," << search.accuracy << "," << search.types << ","
    << search.population << "," << search.mutations << "," << search.crossovers << "," << search.generations << ","
    << search.patience << "," << search.batch << "," << search.search_size << "," << search.layer_drop << ","
    << search.seed << "," << (search.finalists ? std::to_string(*search.finalists) : "-") << ","
    << (search.finalist_images ? std::to_string(*search.finalist_images) : "-") << "\nfinetune=" << finetune_epochs
    << "," << finetune_images << "," << finetune_lr << "\nsimulate=" << simulate_frames << "\ncosim=" << cosim_frames
    << "\npackage=" << platform << "," << kernel_mhz << "," << package_frames << "\n";
  return s.str();
}

std::string example_flow() {
  return R"(# FLOW.yaml: the whole flow for one network (mixtd flow FLOW.yaml -o DIR).
# Paths are relative to this file.
name: my-flow
network: ../networks/resnet18-fmnist-w0.25.onnx  # zoo name, .yaml or .onnx (with its weights)
# weights: trained.onnx        # trained weights for a zoo/.yaml network
# train: {epochs: 2, lr: 0.05} # or train it first (needs a dataset)
dataset: fmnist                # fmnist[:DIR] | npy:X.npy,Y.npy[,TX.npy,TY.npy] | cifar10:DIR | imagefolder:DIR
device: zc706                  # u250 | zcu102 | zc706 | a device .yaml
target_fps: 3000               # batch-1 FPS the design must reach
budget: 0.9                    # fraction of the device the solver may use
search:                        # mixtd search (docs/search.md)
  oracle: analytical           # macs | analytical | forest | systemc
  accuracy: top1               # top1 on the dataset | fidelity (no data needed)
  population: 8
  mutations: 8
  crossovers: 8
  generations: 3
  seed: 1
  # finalists: 8               # the answer by short fine-tunes on the validation split; 0: by fitness
finetune: {epochs: 1, images: 2000}  # 0 epochs: skip
simulate: {frames: 3}          # SystemC, functional, against the golden executor
cosim: {frames: 2}             # Verilator; 0: skip the RTL co-simulation
package: {platform: xilinx_u250_gen3x16_xdma_4_1_202210_1, frames: 16}
jobs: 2
)";
}

}  // namespace mixtd::flow
