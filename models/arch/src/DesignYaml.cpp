// design.yaml: load and save (docs/design-yaml.md).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/YamlKeys.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::arch {

namespace fs = std::filesystem;

namespace {

struct Ctx {
  std::string source;
  std::string at(const YAML::Node& n) const {
    const int line = n.Mark().line;
    return source + ":" + (line >= 0 ? std::to_string(line + 1) : std::string("1")) + ": ";
  }
};

std::string show(const YAML::Node& n) { return n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a non-scalar"); }

std::int64_t as_int(const Ctx& c, const YAML::Node& n, const std::string& what) {
  try {
    if (n.IsScalar()) {
      std::size_t used = 0;
      const long long v = std::stoll(n.Scalar(), &used);
      if (used == n.Scalar().size()) return v;
    }
  } catch (const std::exception&) {
  }
  throw Error(c.at(n) + what + " must be an integer, got " + show(n));
}

double as_double(const Ctx& c, const YAML::Node& n, const std::string& what) {
  try {
    if (n.IsScalar()) {
      std::size_t used = 0;
      const double v = std::stod(n.Scalar(), &used);
      if (used == n.Scalar().size() && std::isfinite(v)) return v;
    }
  } catch (const std::exception&) {
  }
  throw Error(c.at(n) + what + " must be a finite number, got " + show(n));
}

// "FILE:LINE: 'what' = VALUE: legal LO .. HI" unless lo <= v <= hi.
std::int64_t int_in(const Ctx& c, const YAML::Node& n, const std::string& what, std::int64_t lo, std::int64_t hi,
                    const std::string& unit = "") {
  const std::int64_t v = as_int(c, n, what);
  if (v < lo || v > hi)
    throw Error(c.at(n) + what + " = " + n.Scalar() + ": legal " + std::to_string(lo) + " .. " + std::to_string(hi) +
                unit);
  return v;
}

std::string as_string(const Ctx& c, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar() && !n.Scalar().empty()) return n.Scalar();
  throw Error(c.at(n) + what + " must be a string, got " + show(n));
}

// A path in design.yaml is relative to the design file; a zoo spec is not a path.
std::string resolve(const std::string& spec, const fs::path& base) {
  if (net::is_zoo_spec(spec)) return spec;
  const fs::path p(spec);
  const std::string ext = p.extension().string();
  if (ext != ".yaml" && ext != ".yml" && ext != ".onnx") return spec;
  return p.is_absolute() ? spec : (base / p).lexically_normal().string();
}

// `factors: FILE`, relative to the design file like the network; the file
// must be there (its contents are read by whoever computes with them).
void parse_factors(const Ctx& c, const YAML::Node& n, const fs::path& base, Design& d) {
  d.factors_spec = as_string(c, n, "'factors'");
  const fs::path p(d.factors_spec);
  d.factors_file = p.is_absolute() ? d.factors_spec : (base / p).lexically_normal().string();
  std::error_code ec;  // a name the file system refuses is "not found" too
  if (!fs::is_regular_file(d.factors_file, ec))
    throw Error(c.at(n) + "design '" + d.name + "': factors file '" + d.factors_file + "' not found ('factors: " +
                d.factors_spec + "' is relative to the design file's folder; `mixtd finetune --factors` writes one)");
}

td::Tau parse_tau(const Ctx& c, const YAML::Node& n, const std::string& who) {
  td::Tau t;
  if (n.IsScalar()) {
    if (n.Scalar() == "none") return t;
    throw Error(c.at(n) + who + "tau must be 'none' or {type, g1, g2, rank}, got " + show(n));
  }
  if (!n.IsMap()) throw Error(c.at(n) + who + "tau must be 'none' or {type, g1, g2, rank}");
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (k != "type" && k != "g1" && k != "g2" && k != "rank")
      throw Error(c.at(kv.first) + who + "unknown tau key '" + k + "' (legal: type, g1, g2, rank)");
  }
  if (!n["type"]) throw Error(c.at(n) + who + "tau needs 'type' (" + std::string(td::kTdTypeNames) + ")");
  const std::string type = as_string(c, n["type"], who + "tau.type");
  const auto tt = td::parse_td_type(type);
  if (!tt)
    throw Error(c.at(n["type"]) + who + "unknown tau.type '" + type + "' (legal: " + std::string(td::kTdTypeNames) +
                ")");
  t.type = *tt;
  if (n["g1"]) t.g1 = as_int(c, n["g1"], who + "tau.g1");
  if (n["g2"]) t.g2 = as_int(c, n["g2"], who + "tau.g2");
  if (n["rank"]) t.rank = as_int(c, n["rank"], who + "tau.rank");
  return t;
}

Psi parse_psi(const Ctx& c, const YAML::Node& n, const std::string& who) {
  Psi p;
  if (n.IsSequence()) {
    if (n.size() != 3)
      throw Error(c.at(n) + who + "a stage is [p_in, p_out, fine], got a list of " + std::to_string(n.size()));
    p.p_in = as_int(c, n[0], who + "p_in");
    p.p_out = as_int(c, n[1], who + "p_out");
    p.fine = as_int(c, n[2], who + "fine");
    return p;
  }
  if (!n.IsMap()) throw Error(c.at(n) + who + "a stage is [p_in, p_out, fine] or {p_in, p_out, fine}");
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (k != "p_in" && k != "p_out" && k != "fine")
      throw Error(c.at(kv.first) + who + "unknown stage key '" + k + "' (legal: p_in, p_out, fine)");
  }
  if (n["p_in"]) p.p_in = as_int(c, n["p_in"], who + "p_in");
  if (n["p_out"]) p.p_out = as_int(c, n["p_out"], who + "p_out");
  if (n["fine"]) p.fine = as_int(c, n["fine"], who + "fine");
  return p;
}

WeightMemory parse_memory(const Ctx& c, const YAML::Node& n, const std::string& who) {
  if (n.IsScalar())
    if (const auto m = parse_weight_memory(n.Scalar())) return *m;
  throw Error(c.at(n) + who + "weight_memory must be one of " + std::string(kWeightMemoryNames) + ", got " + show(n));
}

// `weight_memory`: one kind for every stage of the layer, or a list with
// one per stage.
void parse_weight_memories(const Ctx& c, const YAML::Node& n, const std::string& who, LayerMapping& m) {
  if (!n.IsSequence()) {
    const WeightMemory all = parse_memory(c, n, who);
    for (auto& p : m.stages) p.weight_memory = all;
    return;
  }
  if (n.size() != m.stages.size())
    throw Error(c.at(n) + who + "'weight_memory' lists " + std::to_string(n.size()) + " kind(s) but " +
                std::string(td::to_string(m.tau.type)) + " has " + std::to_string(m.stages.size()) +
                " stage(s); give one per stage, or one kind for all (" + std::string(kWeightMemoryNames) + ")");
  for (std::size_t k = 0; k < n.size(); ++k)
    m.stages[k].weight_memory = parse_memory(c, n[k], who + "stage " + std::to_string(k) + ": ");
}

// Every `fifo_depths` entry names a stream of the design's graph, and no
// FIFO the file sets (the default depth on every stream, or a stream's own)
// holds more than the device's block memory at that stream's width.
void check_streams(const Ctx& c, const YAML::Node& root, const Design& d) {
  if (!root["fifo_depth"] && !root["fifo_depths"]) return;
  const Graph g = build_graph(d);
  auto limit_error = [&](const YAML::Node& at, const std::string& what, std::int64_t depth, const Stream& s) {
    std::ostringstream m;
    m << c.at(at) << what << " = " << depth << ": stream '" << s.name << "' is " << s.width << " word(s) of "
      << d.bits.activation << " bits a beat, so at most " << max_fifo_depth(d, s.width) << " beats fit in device '"
      << d.device.name << "' (" << static_cast<std::int64_t>(memory_bits(d.device)) << " bits of BRAM/URAM)";
    return Error(m.str());
  };
  if (const auto f = root["fifo_depth"]) {
    const Stream* widest = nullptr;
    for (const auto& s : g.streams)
      if (!d.fifo_depths.count(s.name) && s.depth == d.fifo_depth && (!widest || s.width > widest->width)) widest = &s;
    if (widest && d.fifo_depth > max_fifo_depth(d, widest->width))
      throw limit_error(f, "'fifo_depth'", d.fifo_depth, *widest);
  }
  if (const auto f = root["fifo_depths"]) {
    for (const auto& kv : f) {
      const std::string name = kv.first.Scalar();
      const auto it = std::find_if(g.streams.begin(), g.streams.end(), [&](const Stream& s) { return s.name == name; });
      if (it == g.streams.end()) {
        std::vector<std::string> some;
        for (std::size_t k = 0; k < g.streams.size() && some.size() < 4; ++k) some.push_back(g.streams[k].name);
        throw Error(c.at(kv.first) + "'fifo_depths': no stream '" + name + "' in this design (" +
                    std::to_string(g.streams.size()) + " streams, named <from>-><to>, e.g. " + join(some) +
                    "; `mixtd simulate DESIGN --all-modules` lists them)");
      }
      const std::int64_t depth = d.fifo_depths.at(name);
      if (depth > max_fifo_depth(d, it->width)) throw limit_error(kv.second, "FIFO '" + name + "' depth", depth, *it);
    }
  }
}

}  // namespace

Design parse_design(const std::string& text, const std::string& source, const fs::path& base) {
  Ctx c{source};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  if (!root.IsMap()) throw Error(source + ":1: a design is a mapping (network, device, layers, ...)");
  static const std::set<std::string> keys = {"design", "network", "factors",    "device",      "clock_mhz",
                                             "budget", "bits",    "fifo_depth", "fifo_depths", "layers"};
  refuse_duplicate_keys(root, source);
  for (const auto& kv : root) {
    const std::string k = kv.first.as<std::string>();
    if (!keys.count(k))
      throw Error(c.at(kv.first) + "unknown key '" + k +
                  "' (legal: design, network, factors, device, clock_mhz, budget, bits, fifo_depth, fifo_depths, "
                  "layers)");
  }
  if (!root["network"]) throw Error(source + ":1: missing 'network' (a zoo name or a .yaml/.onnx path)");
  if (!root["device"]) throw Error(source + ":1: missing 'device' (e.g. u250, or a device .yaml)");
  const std::string net_spec = as_string(c, root["network"], "'network'");
  const std::string dev_spec = as_string(c, root["device"], "'device'");
  net::Network network;
  Device device;
  try {
    network = net::load_network(resolve(net_spec, base), false);
  } catch (const Error& e) {
    throw Error(c.at(root["network"]) + e.what());
  }
  try {
    device = load_device(resolve(dev_spec, base));
  } catch (const Error& e) {
    throw Error(c.at(root["device"]) + e.what());
  }
  Design d = make_design(std::move(network), net_spec, std::move(device), dev_spec);
  d.network_file = resolve(net_spec, base);
  d.name = root["design"] ? as_string(c, root["design"], "'design'") : d.network.name;
  if (const auto f = root["factors"]) parse_factors(c, f, base, d);
  if (root["clock_mhz"]) {
    d.clock_mhz = as_double(c, root["clock_mhz"], "'clock_mhz'");
    if (!(d.clock_mhz >= kMinClockMhz && d.clock_mhz <= kMaxClockMhz))
      throw Error(c.at(root["clock_mhz"]) + "'clock_mhz' = " + root["clock_mhz"].Scalar() + ": legal " + clock_range());
  }
  if (root["budget"]) {
    d.budget = as_double(c, root["budget"], "'budget'");
    if (!(d.budget > 0 && d.budget <= 1))
      throw Error(c.at(root["budget"]) + "'budget' = " + root["budget"].Scalar() +
                  ": legal above 0 and at most 1 (the fraction of the device the solver may use)");
  }
  if (const auto b = root["bits"]) {
    if (!b.IsMap()) throw Error(c.at(b) + "'bits' must be {weight: W, activation: A}");
    for (const auto& kv : b)
      if (kv.first.Scalar() != "weight" && kv.first.Scalar() != "activation")
        throw Error(c.at(kv.first) + "unknown key '" + kv.first.Scalar() + "' in 'bits' (legal: weight, activation)");
    if (b["weight"]) d.bits.weight = static_cast<int>(int_in(c, b["weight"], "'bits.weight'", 1, 16, " bits"));
    if (b["activation"])
      d.bits.activation = static_cast<int>(int_in(c, b["activation"], "'bits.activation'", 1, 16, " bits"));
  }
  // Depths: bounded here by the narrowest stream (validate()), below by
  // each stream's own width once the graph is known.
  const std::string beats = " beats (device '" + d.device.name +
                            "': " + std::to_string(static_cast<std::int64_t>(memory_bits(d.device))) +
                            " bits of BRAM/URAM over " + std::to_string(d.bits.activation) + "-bit words)";
  if (root["fifo_depth"]) d.fifo_depth = int_in(c, root["fifo_depth"], "'fifo_depth'", 1, max_fifo_depth(d, 1), beats);
  if (const auto f = root["fifo_depths"]) {
    if (!f.IsMap()) throw Error(c.at(f) + "'fifo_depths' must map stream names to depths");
    for (const auto& kv : f) {
      const std::string stream = as_string(c, kv.first, "a 'fifo_depths' stream name");
      d.fifo_depths[stream] = int_in(c, kv.second, "FIFO '" + stream + "' depth", 1, max_fifo_depth(d, 1), beats);
    }
  }
  if (const auto layers = root["layers"]) {
    if (!layers.IsMap()) throw Error(c.at(layers) + "'layers' must map layer names to {tau, stages}");
    for (const auto& kv : layers) {
      const std::string name = kv.first.as<std::string>();
      const std::string who = "layer '" + name + "': ";
      if (!d.layers.count(name)) {
        const net::Layer* l = d.network.find(name);
        throw Error(c.at(kv.first) + who +
                    (l ? "is a " + std::string(net::to_string(l->kind)) + "; only conv2d and linear layers are mapped"
                       : "no such layer in network '" + d.network.name + "'"));
      }
      const YAML::Node& v = kv.second;
      if (!v.IsMap()) throw Error(c.at(v) + who + "must be {tau, stages}");
      for (const auto& e : v) {
        const std::string k = e.first.as<std::string>();
        if (k != "tau" && k != "stages" && k != "weight_memory")
          throw Error(c.at(e.first) + who + "unknown key '" + k + "' (legal: tau, stages, weight_memory)");
      }
      LayerMapping m;
      if (v["tau"]) m.tau = parse_tau(c, v["tau"], who);
      const net::Layer& l = *d.network.find(name);
      std::size_t nstages = 1;
      try {
        nstages = l.kind == net::LayerKind::Linear ? 1 : td::geometry(l, m.tau).stages.size();
      } catch (const Error& e) {
        throw Error(c.at(v["tau"] ? v["tau"] : v) + e.what());
      }
      if (v["stages"]) {
        const auto& st = v["stages"];
        if (!st.IsSequence()) throw Error(c.at(st) + who + "'stages' must be a list of [p_in, p_out, fine]");
        for (std::size_t k = 0; k < st.size(); ++k)
          m.stages.push_back(parse_psi(c, st[k], who + "stage " + std::to_string(k) + ": "));
        if (m.stages.size() != nstages)
          throw Error(c.at(st) + who + std::string(td::to_string(m.tau.type)) + " has " + std::to_string(nstages) +
                      " stage(s), got " + std::to_string(m.stages.size()) + " in 'stages'");
      } else {
        m.stages.assign(nstages, Psi{});
      }
      if (v["weight_memory"]) parse_weight_memories(c, v["weight_memory"], who, m);
      d.layers[name] = m;
    }
  }
  try {
    validate(d);
  } catch (const Error& e) {
    // Point at the layer's entry when the message is about one.
    const std::string msg = e.what();
    if (const auto layers = root["layers"])
      for (const auto& kv : layers)
        if (msg.rfind("layer '" + kv.first.as<std::string>() + "'", 0) == 0) throw Error(c.at(kv.first) + msg);
    throw Error(source + ": " + msg);
  }
  check_streams(c, root, d);
  return d;
}

Design load_design(const fs::path& path) { return parse_design(read_file(path), path.string(), path.parent_path()); }

std::string to_yaml(const Design& d) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "design" << YAML::Value << d.name;
  e << YAML::Key << "network" << YAML::Value << d.network_spec;
  if (!d.factors_spec.empty()) e << YAML::Key << "factors" << YAML::Value << d.factors_spec;
  e << YAML::Key << "device" << YAML::Value << d.device_spec;
  e << YAML::Key << "clock_mhz" << YAML::Value << d.clock_mhz;
  e << YAML::Key << "budget" << YAML::Value << d.budget;
  e << YAML::Key << "bits" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "weight" << YAML::Value
    << d.bits.weight << YAML::Key << "activation" << YAML::Value << d.bits.activation << YAML::EndMap;
  e << YAML::Key << "fifo_depth" << YAML::Value << d.fifo_depth;
  if (!d.fifo_depths.empty()) {
    e << YAML::Key << "fifo_depths" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : d.fifo_depths) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
  }
  e << YAML::Key << "layers" << YAML::Value << YAML::BeginMap;
  for (const auto& l : d.network.layers) {  // network order, not alphabetical
    auto it = d.layers.find(l.name);
    if (it == d.layers.end()) continue;
    const LayerMapping& m = it->second;
    e << YAML::Key << l.name << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "tau" << YAML::Value;
    if (m.tau.decomposed()) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value << std::string(td::to_string(m.tau.type))
        << YAML::Key << "g1" << YAML::Value << m.tau.g1 << YAML::Key << "g2" << YAML::Value << m.tau.g2 << YAML::Key
        << "rank" << YAML::Value << m.tau.rank << YAML::EndMap;
    } else {
      e << "none";
    }
    e << YAML::Key << "stages" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& p : m.stages) e << YAML::Flow << YAML::BeginSeq << p.p_in << p.p_out << p.fine << YAML::EndSeq;
    e << YAML::EndSeq;
    // Omitted when all auto (as designs from before the choice), one kind
    // when the stages agree, else one per stage.
    const bool all_auto = std::all_of(m.stages.begin(), m.stages.end(),
                                      [](const Psi& p) { return p.weight_memory == WeightMemory::Auto; });
    const bool all_same = std::all_of(m.stages.begin(), m.stages.end(),
                                      [&](const Psi& p) { return p.weight_memory == m.stages.front().weight_memory; });
    if (!all_auto) {
      e << YAML::Key << "weight_memory" << YAML::Value;
      if (all_same) {
        e << std::string(to_string(m.stages.front().weight_memory));
      } else {
        e << YAML::Flow << YAML::BeginSeq;
        for (const auto& p : m.stages) e << std::string(to_string(p.weight_memory));
        e << YAML::EndSeq;
      }
    }
    e << YAML::EndMap;
  }
  e << YAML::EndMap << YAML::EndMap;
  return std::string(
             "# mixtd design (docs/design-yaml.md). stages: [p_in, p_out, fine] per stage; weight_memory: auto, bram "
             "or uram\n") +
         e.c_str() + "\n";
}

void save_design(const Design& d, const fs::path& path) { write_file_atomic(path, to_yaml(d)); }

void save_design_with_weights(Design d, const fs::path& path, const fs::path& network, const fs::path& factors) {
  const std::string net = network.string(), ext = network.extension().string();
  require(ext == ".onnx" || ext == ".yaml" || ext == ".yml",
          "'" + net + "': a design names its network by an .onnx or .yaml path, no other is read as a file");
  const fs::path dir = fs::absolute(path).lexically_normal().parent_path();
  auto from_dir = [&](const fs::path& p) {
    return fs::absolute(p).lexically_normal().lexically_relative(dir).string();
  };
  d.network_spec = from_dir(network);
  d.network_file = fs::absolute(network).lexically_normal().string();
  d.factors_spec = from_dir(factors);
  d.factors_file = fs::absolute(factors).lexically_normal().string();
  save_design(d, path);
}

}  // namespace mixtd::arch
