#include "mixtd/net/Yaml.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "mixtd/net/WeightsFile.h"
#include "mixtd/net/YamlKeys.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::net {

namespace fs = std::filesystem;

namespace {

// Everything needed to say "file:line: ..." about a node.
struct Ctx {
  std::string source;
  std::string at(const YAML::Node& n) const {
    const auto m = n.Mark();
    return source + ":" + (m.line >= 0 ? std::to_string(m.line + 1) : std::string("?")) + ": ";
  }
};

std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

std::int64_t as_int(const Ctx& c, const YAML::Node& n, const std::string& what) {
  try {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      std::size_t used = 0;
      const long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
    }
  } catch (const std::exception&) {
  }
  throw Error(c.at(n) + what + " must be an integer, got " + describe(n));
}

double as_double(const Ctx& c, const YAML::Node& n, const std::string& what) {
  try {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      std::size_t used = 0;
      const double v = std::stod(s, &used);
      if (used == s.size() && std::isfinite(v)) return v;
    }
  } catch (const std::exception&) {
  }
  throw Error(c.at(n) + what + " must be a finite number, got " + describe(n));
}

bool as_bool(const Ctx& c, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "no") return false;
  }
  throw Error(c.at(n) + what + " must be true or false, got " + describe(n));
}

std::string as_name(const Ctx& c, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar() && !n.Scalar().empty()) return n.Scalar();
  throw Error(c.at(n) + what + " must be a name, got " + describe(n));
}

// `kernel: 3` or `kernel: [3, 5]` (height, width).
std::pair<std::int64_t, std::int64_t> as_pair(const Ctx& c, const YAML::Node& n, const std::string& what) {
  if (n.IsSequence()) {
    if (n.size() != 2)
      throw Error(c.at(n) + what + " must be one integer or [height, width], got a list of " +
                  std::to_string(n.size()));
    return {as_int(c, n[0], what), as_int(c, n[1], what)};
  }
  const std::int64_t v = as_int(c, n, what);
  return {v, v};
}

// Keys each kind accepts (beyond name, kind, input/inputs).
const std::map<LayerKind, std::set<std::string>>& legal_keys() {
  static const std::map<LayerKind, std::set<std::string>> k = {
      {LayerKind::Conv2d, {"out_channels", "kernel", "stride", "padding", "groups", "bias"}},
      {LayerKind::BatchNorm, {"eps"}},
      {LayerKind::ReLU, {}},
      {LayerKind::MaxPool, {"kernel", "stride", "padding"}},
      {LayerKind::AvgPool, {"kernel", "stride", "padding", "count_include_pad"}},
      {LayerKind::GlobalAvgPool, {}},
      {LayerKind::Add, {}},
      {LayerKind::Linear, {"out_features", "bias"}},
      {LayerKind::Flatten, {}},
  };
  return k;
}

Layer parse_layer(const Ctx& c, const YAML::Node& n, std::size_t index) {
  if (!n.IsMap())
    throw Error(c.at(n) + "layer #" + std::to_string(index + 1) + " must be a mapping, got " + describe(n));
  Layer l;
  if (!n["name"]) throw Error(c.at(n) + "layer #" + std::to_string(index + 1) + " has no 'name'");
  l.name = as_name(c, n["name"], "'name'");
  const std::string who = "layer '" + l.name + "': ";
  if (!n["kind"]) throw Error(c.at(n) + who + "missing 'kind' (one of " + layer_kind_names() + ")");
  const std::string kind = as_name(c, n["kind"], who + "'kind'");
  const auto k = parse_layer_kind(kind);
  if (!k) throw Error(c.at(n["kind"]) + who + "unknown kind '" + kind + "' (legal: " + layer_kind_names() + ")");
  l.kind = *k;

  const auto& legal = legal_keys().at(l.kind);
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (key == "name" || key == "kind" || key == "input" || key == "inputs") continue;
    if (!legal.count(key)) {
      std::vector<std::string> names(legal.begin(), legal.end());
      throw Error(c.at(kv.first) + who + "unknown key '" + key + "' for kind " + kind + " (legal: name, kind, input" +
                  (l.kind == LayerKind::Add ? "s" : "") + (names.empty() ? std::string() : ", " + join(names)) + ")");
    }
  }

  if (n["input"] && n["inputs"]) throw Error(c.at(n) + who + "give either 'input' or 'inputs', not both");
  if (n["input"]) {
    l.inputs = {as_name(c, n["input"], who + "'input'")};
  } else if (n["inputs"]) {
    const auto& ins = n["inputs"];
    if (!ins.IsSequence()) throw Error(c.at(ins) + who + "'inputs' must be a list of names, got " + describe(ins));
    for (const auto& i : ins) l.inputs.push_back(as_name(c, i, who + "'inputs' entry"));
  } else {
    throw Error(c.at(n) + who + "missing 'input' (the producer's name, or the network input's)");
  }

  auto get = [&](const char* key) { return n[key]; };
  switch (l.kind) {
    case LayerKind::Conv2d: {
      if (!get("out_channels")) throw Error(c.at(n) + who + "missing 'out_channels'");
      l.conv.out_channels = as_int(c, get("out_channels"), who + "'out_channels'");
      if (!get("kernel")) throw Error(c.at(n) + who + "missing 'kernel'");
      std::tie(l.conv.kh, l.conv.kw) = as_pair(c, get("kernel"), who + "'kernel'");
      if (get("stride")) std::tie(l.conv.sh, l.conv.sw) = as_pair(c, get("stride"), who + "'stride'");
      if (get("padding")) std::tie(l.conv.ph, l.conv.pw) = as_pair(c, get("padding"), who + "'padding'");
      if (get("groups")) l.conv.groups = as_int(c, get("groups"), who + "'groups'");
      if (get("bias")) l.conv.bias = as_bool(c, get("bias"), who + "'bias'");
      break;
    }
    case LayerKind::MaxPool:
    case LayerKind::AvgPool: {
      if (!get("kernel")) throw Error(c.at(n) + who + "missing 'kernel'");
      std::tie(l.pool.kh, l.pool.kw) = as_pair(c, get("kernel"), who + "'kernel'");
      l.pool.sh = l.pool.kh;  // PyTorch's default: stride = kernel
      l.pool.sw = l.pool.kw;
      if (get("stride")) std::tie(l.pool.sh, l.pool.sw) = as_pair(c, get("stride"), who + "'stride'");
      if (get("padding")) std::tie(l.pool.ph, l.pool.pw) = as_pair(c, get("padding"), who + "'padding'");
      if (get("count_include_pad"))
        l.pool.count_include_pad = as_bool(c, get("count_include_pad"), who + "'count_include_pad'");
      break;
    }
    case LayerKind::Linear:
      if (!get("out_features")) throw Error(c.at(n) + who + "missing 'out_features'");
      l.linear.out_features = as_int(c, get("out_features"), who + "'out_features'");
      if (get("bias")) l.linear.bias = as_bool(c, get("bias"), who + "'bias'");
      break;
    case LayerKind::BatchNorm:
      if (get("eps")) l.bn.eps = as_double(c, get("eps"), who + "'eps'");
      break;
    default:
      break;
  }
  return l;
}

}  // namespace

Network parse_yaml(std::string_view text, const std::string& source, const fs::path& base_dir, bool with_weights) {
  Ctx c{source};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  if (!root.IsMap()) throw Error(source + ":1: expected a mapping with 'network', 'input' and 'layers'");
  refuse_duplicate_keys(root, source);
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (key != "network" && key != "input" && key != "layers" && key != "weights")
      throw Error(c.at(kv.first) + "unknown top-level key '" + key + "' (legal: network, input, weights, layers)");
  }
  Network net;
  if (root["network"]) net.name = as_name(c, root["network"], "'network'");
  const auto in = root["input"];
  if (!in) throw Error(source + ":1: missing 'input' (e.g. input: {shape: [3, 224, 224]})");
  if (!in.IsMap() || !in["shape"])
    throw Error(c.at(in) + "'input' must be a mapping with 'shape: [C, H, W]', got " + describe(in));
  if (in["name"]) net.input_name = as_name(c, in["name"], "'input.name'");
  const auto shape = in["shape"];
  if (!shape.IsSequence() || shape.size() != 3)
    throw Error(c.at(shape) + "'input.shape' must be [C, H, W], got " + describe(shape));
  net.input_shape = {as_int(c, shape[0], "input channels"), as_int(c, shape[1], "input height"),
                     as_int(c, shape[2], "input width")};

  const auto layers = root["layers"];
  if (!layers) throw Error(source + ":1: missing 'layers'");
  if (!layers.IsSequence() || layers.size() == 0)
    throw Error(c.at(layers) + "'layers' must be a non-empty list, got " + describe(layers));
  std::map<std::string, YAML::Node> node_of;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Layer l = parse_layer(c, layers[i], i);
    node_of[l.name] = layers[i];
    try {
      net.add(std::move(l));
    } catch (const Error& e) {
      throw Error(c.at(layers[i]) + e.what());
    }
  }
  try {
    net.infer_shapes();
  } catch (const Error& e) {
    // Put the line of the layer the message is about in front of it.
    const std::string msg = e.what();
    for (const auto& [name, node] : node_of)
      if (msg.rfind("layer '" + name + "'", 0) == 0) throw Error(c.at(node) + msg);
    throw Error(source + ": " + msg);
  }
  if (root["weights"] && with_weights) {
    const fs::path w = base_dir / as_name(c, root["weights"], "'weights'");
    try {
      load_weights(net, w);
    } catch (const Error& e) {
      throw Error(c.at(root["weights"]) + e.what());
    }
  }
  return net;
}

Network load_yaml(const fs::path& path, bool with_weights) {
  const std::string text = read_file(path);
  return parse_yaml(text, path.string(), path.parent_path(), with_weights);
}

std::string to_yaml(const Network& net, const std::string& weights_ref) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "network" << YAML::Value << net.name;
  e << YAML::Key << "input" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << net.input_name << YAML::Key << "shape" << YAML::Value << YAML::Flow << YAML::BeginSeq << net.input_shape.c
    << net.input_shape.h << net.input_shape.w << YAML::EndSeq << YAML::EndMap;
  if (!weights_ref.empty()) e << YAML::Key << "weights" << YAML::Value << weights_ref;
  e << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  auto pair = [&](const char* key, std::int64_t a, std::int64_t b) {
    e << YAML::Key << key << YAML::Value;
    if (a == b)
      e << a;
    else
      e << YAML::Flow << YAML::BeginSeq << a << b << YAML::EndSeq;
  };
  for (const auto& l : net.layers) {
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "name" << YAML::Value << l.name;
    e << YAML::Key << "kind" << YAML::Value << std::string(to_string(l.kind));
    if (l.inputs.size() == 1) {
      e << YAML::Key << "input" << YAML::Value << l.inputs[0];
    } else {
      e << YAML::Key << "inputs" << YAML::Value << YAML::Flow << l.inputs;
    }
    switch (l.kind) {
      case LayerKind::Conv2d:
        e << YAML::Key << "out_channels" << YAML::Value << l.conv.out_channels;
        pair("kernel", l.conv.kh, l.conv.kw);
        pair("stride", l.conv.sh, l.conv.sw);
        pair("padding", l.conv.ph, l.conv.pw);
        if (l.conv.groups != 1) e << YAML::Key << "groups" << YAML::Value << l.conv.groups;
        e << YAML::Key << "bias" << YAML::Value << l.conv.bias;
        break;
      case LayerKind::MaxPool:
      case LayerKind::AvgPool:
        pair("kernel", l.pool.kh, l.pool.kw);
        pair("stride", l.pool.sh, l.pool.sw);
        pair("padding", l.pool.ph, l.pool.pw);
        if (l.kind == LayerKind::AvgPool)
          e << YAML::Key << "count_include_pad" << YAML::Value << l.pool.count_include_pad;
        break;
      case LayerKind::Linear:
        e << YAML::Key << "out_features" << YAML::Value << l.linear.out_features;
        e << YAML::Key << "bias" << YAML::Value << l.linear.bias;
        break;
      case LayerKind::BatchNorm:
        e << YAML::Key << "eps" << YAML::Value << l.bn.eps;
        break;
      default:
        break;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string("# mixtd network description (docs/network-yaml.md)\n") + e.c_str() + "\n";
}

void save_yaml(const Network& net, const fs::path& path) {
  std::string ref;
  if (net.has_weights()) {
    fs::path w = path;
    w.replace_extension(".weights");
    save_weights(net, w);
    ref = w.filename().string();
  }
  write_file_atomic(path, to_yaml(net, ref));
}

}  // namespace mixtd::net
