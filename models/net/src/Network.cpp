#include "mixtd/net/Network.h"

#include <cmath>
#include <cstring>
#include <unordered_set>

#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::net {

namespace {

std::string where(const Layer& l) { return "layer '" + l.name + "' (" + std::string(to_string(l.kind)) + ")"; }

// Output size of a sliding window along one axis (floor mode, as PyTorch's
// default and ONNX's ceil_mode = 0).
std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p) {
  return (in + 2 * p - k) / s + 1;
}

void check_window(const Layer& l, const char* what, std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw,
                  std::int64_t ph, std::int64_t pw) {
  require(kh >= 1 && kw >= 1, where(l) + ": " + what + " kernel must be at least 1x1, got " + std::to_string(kh) + "x" +
                                  std::to_string(kw));
  require(sh >= 1 && sw >= 1,
          where(l) + ": stride must be at least 1, got " + std::to_string(sh) + "x" + std::to_string(sw));
  require(ph >= 0 && pw >= 0,
          where(l) + ": padding must be non-negative, got " + std::to_string(ph) + "x" + std::to_string(pw));
  require(l.in_shape.h + 2 * ph >= kh && l.in_shape.w + 2 * pw >= kw,
          where(l) + ": " + what + " kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
              " does not fit the padded input " + l.in_shape.str() + " (padding " + std::to_string(ph) + "x" +
              std::to_string(pw) + ")");
}

std::vector<long long> divisors(std::int64_t n) {
  std::vector<long long> d;
  for (std::int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

}  // namespace

Layer& Network::add(Layer layer) {
  require(!layer.name.empty(),
          "a layer of kind " + std::string(to_string(layer.kind)) + " has no name (every layer needs a unique name)");
  require(layer.name != input_name, "layer name '" + layer.name + "' is the network input's name; choose another");
  require(find(layer.name) == nullptr, "duplicate layer name '" + layer.name + "'");
  const std::size_t want_min = layer.kind == LayerKind::Add ? 2 : 1;
  require(layer.inputs.size() >= want_min && (layer.kind == LayerKind::Add || layer.inputs.size() == 1),
          where(layer) + ": takes " +
              (layer.kind == LayerKind::Add ? std::string("two or more inputs") : std::string("exactly one input")) +
              ", got " + std::to_string(layer.inputs.size()));
  for (const auto& in : layer.inputs) {
    require(in == input_name || find(in) != nullptr,
            where(layer) + ": input '" + in + "' is not the network input ('" + input_name + "') nor an earlier layer");
  }
  layers.push_back(std::move(layer));
  return layers.back();
}

const Layer* Network::find(std::string_view n) const {
  for (const auto& l : layers)
    if (l.name == n) return &l;
  return nullptr;
}

Layer* Network::find(std::string_view n) {
  for (auto& l : layers)
    if (l.name == n) return &l;
  return nullptr;
}

int Network::index_of(std::string_view n) const {
  if (n == input_name) return -1;
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layers[i].name == n) return static_cast<int>(i);
  throw Error("no layer named '" + std::string(n) + "' in network '" + name + "'");
}

Shape Network::shape_of(std::string_view n) const {
  const int i = index_of(n);
  return i < 0 ? input_shape : layers[static_cast<std::size_t>(i)].out_shape;
}

std::vector<std::string> Network::consumers(std::string_view n) const {
  std::vector<std::string> out;
  for (const auto& l : layers)
    for (const auto& in : l.inputs)
      if (in == n) {
        out.push_back(l.name);
        break;
      }
  return out;
}

std::vector<std::string> Network::outputs() const {
  std::unordered_set<std::string> read;
  for (const auto& l : layers)
    for (const auto& in : l.inputs) read.insert(in);
  std::vector<std::string> out;
  for (const auto& l : layers)
    if (!read.count(l.name)) out.push_back(l.name);
  return out;
}

void Network::infer_shapes() {
  require(input_shape.c >= 1 && input_shape.h >= 1 && input_shape.w >= 1,
          "network '" + name + "': input shape must be positive, got " + input_shape.str());
  require(!layers.empty(), "network '" + name + "' has no layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Layer& l = layers[i];
    for (const auto& in : l.inputs) {
      const int j = index_of(in);
      require(j < static_cast<int>(i),
              where(l) + ": input '" + in + "' comes later in the layer list (layers must be in topological order)");
    }
    l.in_shape = shape_of(l.inputs.at(0));
    const Shape s = l.in_shape;
    switch (l.kind) {
      case LayerKind::Conv2d: {
        const auto& c = l.conv;
        require(c.out_channels >= 1,
                where(l) + ": out_channels must be at least 1, got " + std::to_string(c.out_channels));
        require(c.groups >= 1, where(l) + ": groups must be at least 1, got " + std::to_string(c.groups));
        if (s.c % c.groups != 0 || c.out_channels % c.groups != 0) {
          std::vector<long long> legal;
          for (long long d : divisors(s.c))
            if (c.out_channels % d == 0) legal.push_back(d);
          throw Error(where(l) + ": groups = " + std::to_string(c.groups) + " must divide both the " +
                      std::to_string(s.c) + " input channels (input '" + l.inputs[0] + "', shape " + s.str() +
                      ") and the " + std::to_string(c.out_channels) + " output channels; legal: " + join_ints(legal));
        }
        check_window(l, "conv", c.kh, c.kw, c.sh, c.sw, c.ph, c.pw);
        l.out_shape = {c.out_channels, window_out(s.h, c.kh, c.sh, c.ph), window_out(s.w, c.kw, c.sw, c.pw)};
        break;
      }
      case LayerKind::MaxPool:
      case LayerKind::AvgPool: {
        const auto& p = l.pool;
        check_window(l, "pool", p.kh, p.kw, p.sh, p.sw, p.ph, p.pw);
        require(2 * p.ph <= p.kh && 2 * p.pw <= p.kw, where(l) + ": padding " + std::to_string(p.ph) + "x" +
                                                          std::to_string(p.pw) + " must be at most half the kernel " +
                                                          std::to_string(p.kh) + "x" + std::to_string(p.kw));
        l.out_shape = {s.c, window_out(s.h, p.kh, p.sh, p.ph), window_out(s.w, p.kw, p.sw, p.pw)};
        break;
      }
      case LayerKind::GlobalAvgPool:
        l.out_shape = {s.c, 1, 1};
        break;
      case LayerKind::BatchNorm:
      case LayerKind::ReLU:
        l.out_shape = s;
        break;
      case LayerKind::Add:
        for (const auto& in : l.inputs) {
          const Shape t = shape_of(in);
          require(t == s, where(l) + ": input '" + in + "' has shape " + t.str() + " but input '" + l.inputs[0] +
                              "' has " + s.str() + " (Add needs equal shapes)");
        }
        l.out_shape = s;
        break;
      case LayerKind::Flatten:
        l.out_shape = {s.numel(), 1, 1};
        break;
      case LayerKind::Linear:
        require(l.linear.out_features >= 1,
                where(l) + ": out_features must be at least 1, got " + std::to_string(l.linear.out_features));
        require(s.h == 1 && s.w == 1, where(l) + ": input '" + l.inputs[0] + "' has shape " + s.str() +
                                          "; a linear layer needs Cx1x1 (insert a flatten or globalavgpool before it)");
        l.out_shape = {l.linear.out_features, 1, 1};
        break;
    }
  }
}

void Network::check_weights() const {
  for (const auto& l : layers) {
    const std::int64_t ws = l.expected_weight_size();
    const std::int64_t bs = l.expected_bias_size();
    if (ws == 0) {
      require(l.weight.empty() && l.bias.empty(), where(l) + ": this kind has no weights, but some were given");
      continue;
    }
    if (l.weight.empty() && l.bias.empty() && l.mean.empty() && l.var.empty()) continue;
    require(static_cast<std::int64_t>(l.weight.size()) == ws,
            where(l) + ": weight has " + std::to_string(l.weight.size()) + " elements, expected " + std::to_string(ws) +
                " for input " + l.in_shape.str() + " and output " + l.out_shape.str());
    require(static_cast<std::int64_t>(l.bias.size()) == bs,
            where(l) + ": bias has " + std::to_string(l.bias.size()) + " elements, expected " + std::to_string(bs));
    if (l.kind == LayerKind::BatchNorm) {
      require(static_cast<std::int64_t>(l.mean.size()) == bs && static_cast<std::int64_t>(l.var.size()) == bs,
              where(l) + ": running mean/var must have " + std::to_string(bs) + " elements each");
    }
  }
}

void Network::fold_batchnorm() {
  infer_shapes();
  std::vector<Layer> kept;
  kept.reserve(layers.size());
  std::vector<std::pair<std::string, std::string>> renames;  // bn name -> conv name
  for (auto& l : layers) {
    if (l.kind != LayerKind::BatchNorm) {
      kept.push_back(std::move(l));
      continue;
    }
    const std::string& src = l.inputs[0];
    Layer* conv = nullptr;
    for (auto& k : kept)
      if (k.name == src) conv = &k;
    require(conv != nullptr && conv->kind == LayerKind::Conv2d,
            where(l) + ": can only be folded into a conv2d, but its input '" + src + "' is " +
                (conv ? std::string(to_string(conv->kind)) : std::string("the network input")));
    require(consumers(src).size() == 1, where(l) + ": cannot be folded: conv '" + src + "' also feeds other layers");
    const bool conv_w = conv->has_weights(), bn_w = l.has_weights();
    require(conv_w == bn_w, where(l) + ": cannot fold: only one of it and conv '" + src + "' has weights");
    if (conv_w) {
      const std::int64_t n = conv->conv.out_channels;
      const std::int64_t per = static_cast<std::int64_t>(conv->weight.size()) / n;
      std::vector<float> bias = conv->bias.empty() ? std::vector<float>(static_cast<std::size_t>(n), 0.0f) : conv->bias;
      for (std::int64_t o = 0; o < n; ++o) {
        const auto oi = static_cast<std::size_t>(o);
        const double scale = static_cast<double>(l.weight[oi]) / std::sqrt(static_cast<double>(l.var[oi]) + l.bn.eps);
        for (std::int64_t k = 0; k < per; ++k) {
          auto& w = conv->weight[static_cast<std::size_t>(o * per + k)];
          w = static_cast<float>(w * scale);
        }
        bias[oi] = static_cast<float>((bias[oi] - l.mean[oi]) * scale + l.bias[oi]);
      }
      conv->bias = std::move(bias);
    }
    conv->conv.bias = true;
    renames.emplace_back(l.name, conv->name);
  }
  layers = std::move(kept);
  // Readers of a folded BatchNorm now read its conv.
  for (auto& l : layers)
    for (auto& in : l.inputs)
      for (const auto& [from, to] : renames)
        if (in == from) in = to;
  infer_shapes();
}

bool Network::has_weights() const {
  for (const auto& l : layers)
    if (l.has_weights()) return true;
  return false;
}

void Network::clear_weights() {
  for (auto& l : layers) {
    l.weight.clear();
    l.bias.clear();
    l.mean.clear();
    l.var.clear();
  }
}

bool Network::same_structure(const Network& o) const {
  if (input_shape != o.input_shape || input_name != o.input_name || layers.size() != o.layers.size()) return false;
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (!layers[i].same_structure(o.layers[i])) return false;
  return true;
}

bool Network::same_weights(const Network& o) const {
  if (!same_structure(o)) return false;
  auto eq = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto &a = layers[i], &b = o.layers[i];
    if (!eq(a.weight, b.weight) || !eq(a.bias, b.bias) || !eq(a.mean, b.mean) || !eq(a.var, b.var)) return false;
  }
  return true;
}

std::map<std::string, std::string> fused_relus(const Network& net) {
  std::map<std::string, std::string> out;
  for (const auto& l : net.layers) {
    if (l.kind != LayerKind::ReLU) continue;
    const Layer* p = net.find(l.inputs[0]);
    if (!p) continue;
    const bool fusable = p->kind == LayerKind::Conv2d || p->kind == LayerKind::Linear || p->kind == LayerKind::Add;
    if (fusable && net.consumers(p->name).size() == 1) out[p->name] = l.name;
  }
  return out;
}

void init_random_weights(Network& net, std::uint64_t seed) {
  net.infer_shapes();
  for (auto& l : net.layers) {
    const std::int64_t ws = l.expected_weight_size();
    if (ws == 0) continue;
    Rng rng(seed ^ hash_string(l.name));
    const std::int64_t bs = l.expected_bias_size();
    if (l.kind == LayerKind::BatchNorm) {
      l.weight.assign(static_cast<std::size_t>(ws), 1.0f);
      l.bias.assign(static_cast<std::size_t>(bs), 0.0f);
      l.mean.assign(static_cast<std::size_t>(bs), 0.0f);
      l.var.assign(static_cast<std::size_t>(bs), 1.0f);
      continue;
    }
    const std::int64_t fan_in =
        l.kind == LayerKind::Conv2d ? (l.in_shape.c / l.conv.groups) * l.conv.kh * l.conv.kw : l.in_shape.numel();
    const double std_w = std::sqrt(2.0 / static_cast<double>(fan_in));
    const double bound_b = 1.0 / std::sqrt(static_cast<double>(fan_in));
    l.weight.resize(static_cast<std::size_t>(ws));
    for (auto& w : l.weight) w = static_cast<float>(std_w * rng.normal());
    l.bias.resize(static_cast<std::size_t>(bs));
    for (auto& b : l.bias) b = static_cast<float>(rng.uniform(-bound_b, bound_b));
  }
}

}  // namespace mixtd::net
