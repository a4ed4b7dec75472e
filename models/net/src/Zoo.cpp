#include "mixtd/net/Zoo.h"

#include <charconv>
#include <cmath>
#include <map>

#include "mixtd/support/Error.h"

namespace mixtd::net {

namespace {

struct ZooOptions {
  double width = 1.0;
  std::int64_t classes = -1;  // -1: the network's own default
  std::uint64_t seed = 0;
};

// Small helper that names layers and chains them, so the builders below read
// like the PyTorch modules they mirror (torchvision's names, for ONNX import).
class Builder {
 public:
  explicit Builder(Network& net) : net_(net) {}

  std::string conv(const std::string& name, const std::string& in, std::int64_t out, std::int64_t k,
                   std::int64_t stride, std::int64_t pad, std::int64_t groups = 1) {
    Layer l;
    l.name = name;
    l.kind = LayerKind::Conv2d;
    l.inputs = {in};
    l.conv.out_channels = out;
    l.conv.kh = l.conv.kw = k;
    l.conv.sh = l.conv.sw = stride;
    l.conv.ph = l.conv.pw = pad;
    l.conv.groups = groups;
    l.conv.bias = true;  // BatchNorm folded: deploy form
    return net_.add(std::move(l)).name;
  }
  std::string relu(const std::string& name, const std::string& in) { return simple(name, LayerKind::ReLU, {in}); }
  std::string add(const std::string& name, const std::string& a, const std::string& b) {
    return simple(name, LayerKind::Add, {a, b});
  }
  std::string gap(const std::string& name, const std::string& in) {
    return simple(name, LayerKind::GlobalAvgPool, {in});
  }
  std::string flatten(const std::string& name, const std::string& in) { return simple(name, LayerKind::Flatten, {in}); }
  std::string pool(const std::string& name, LayerKind kind, const std::string& in, std::int64_t k, std::int64_t s,
                   std::int64_t p) {
    Layer l;
    l.name = name;
    l.kind = kind;
    l.inputs = {in};
    l.pool.kh = l.pool.kw = k;
    l.pool.sh = l.pool.sw = s;
    l.pool.ph = l.pool.pw = p;
    return net_.add(std::move(l)).name;
  }
  std::string linear(const std::string& name, const std::string& in, std::int64_t out) {
    Layer l;
    l.name = name;
    l.kind = LayerKind::Linear;
    l.inputs = {in};
    l.linear.out_features = out;
    return net_.add(std::move(l)).name;
  }

 private:
  std::string simple(const std::string& name, LayerKind kind, std::vector<std::string> inputs) {
    Layer l;
    l.name = name;
    l.kind = kind;
    l.inputs = std::move(inputs);
    return net_.add(std::move(l)).name;
  }
  Network& net_;
};

std::int64_t scaled(std::int64_t channels, double width) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::lround(channels * width)));
}

// torchvision BasicBlock: conv1 (stride) -> relu -> conv2 -> (+ downsample) -> relu.
std::string basic_block(Builder& b, const std::string& prefix, const std::string& in, std::int64_t in_ch,
                        std::int64_t out_ch, std::int64_t stride) {
  std::string x = b.conv(prefix + ".conv1", in, out_ch, 3, stride, 1);
  x = b.relu(prefix + ".relu", x);
  x = b.conv(prefix + ".conv2", x, out_ch, 3, 1, 1);
  std::string skip = in;
  if (stride != 1 || in_ch != out_ch) skip = b.conv(prefix + ".downsample.0", in, out_ch, 1, stride, 0);
  x = b.add(prefix + ".add", x, skip);
  return b.relu(prefix + ".relu_1", x);
}

std::string resnet_stages(Builder& b, std::string x, std::int64_t base, bool /*imagenet*/) {
  const std::int64_t widths[4] = {base, base * 2, base * 4, base * 8};
  std::int64_t in_ch = base;
  for (int s = 0; s < 4; ++s) {
    for (int blk = 0; blk < 2; ++blk) {
      const std::int64_t stride = (s > 0 && blk == 0) ? 2 : 1;
      const std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(blk);
      x = basic_block(b, prefix, x, in_ch, widths[s], stride);
      in_ch = widths[s];
    }
  }
  return x;
}

Network resnet18(const ZooOptions& o) {
  Network net;
  net.name = "resnet18";
  net.input_shape = {3, 224, 224};
  Builder b(net);
  const std::int64_t base = scaled(64, o.width);
  std::string x = b.conv("conv1", net.input_name, base, 7, 2, 3);
  x = b.relu("relu", x);
  x = b.pool("maxpool", LayerKind::MaxPool, x, 3, 2, 1);
  x = resnet_stages(b, x, base, true);
  x = b.gap("avgpool", x);
  x = b.flatten("flatten", x);
  b.linear("fc", x, o.classes > 0 ? o.classes : 1000);
  return net;
}

// CIFAR-style stem for 28x28 greyscale: 3x3 stride-1 conv, no max-pool.
Network resnet18_fmnist(const ZooOptions& o) {
  Network net;
  net.name = "resnet18-fmnist";
  net.input_shape = {1, 28, 28};
  Builder b(net);
  const std::int64_t base = scaled(64, o.width);
  std::string x = b.conv("conv1", net.input_name, base, 3, 1, 1);
  x = b.relu("relu", x);
  x = resnet_stages(b, x, base, false);
  x = b.gap("avgpool", x);
  x = b.flatten("flatten", x);
  b.linear("fc", x, o.classes > 0 ? o.classes : 10);
  return net;
}

// RepVGG-A0's deploy form, every block re-parameterised into one 3x3 conv
// + ReLU: widths 64a / 64a / 128a / 256a / 512b with a = 0.75·width,
// b = 2.5·width, depths 1, 2, 4, 14, 1, stage s's first conv at stride
// first_stride[s]; then global average pool and the classifier. One layout
// for repvgg-a0 and repvgg-fmnist (their names match, so do their ONNX files).
void repvgg_a0_layout(Network& net, const ZooOptions& o, const std::int64_t (&first_stride)[5],
                      std::int64_t default_classes) {
  Builder b(net);
  const double a = 0.75 * o.width, bw = 2.5 * o.width;
  const std::int64_t widths[5] = {std::min<std::int64_t>(64, scaled(64, a)), scaled(64, a), scaled(128, a),
                                  scaled(256, a), scaled(512, bw)};
  const int depths[5] = {1, 2, 4, 14, 1};
  std::string x = net.input_name;
  for (int s = 0; s < 5; ++s) {
    for (int i = 0; i < depths[s]; ++i) {
      const std::string prefix = "stage" + std::to_string(s) + "." + std::to_string(i);
      x = b.conv(prefix + ".rbr_reparam", x, widths[s], 3, i == 0 ? first_stride[s] : 1, 1);
      x = b.relu(prefix + ".nonlinearity", x);
    }
  }
  x = b.gap("gap", x);
  x = b.flatten("flatten", x);
  b.linear("linear", x, o.classes > 0 ? o.classes : default_classes);
}

// RepVGG-A0 on 3x224x224: every stage starts at stride 2.
Network repvgg_a0(const ZooOptions& o) {
  Network net;
  net.name = "repvgg-a0";
  net.input_shape = {3, 224, 224};
  repvgg_a0_layout(net, o, {2, 2, 2, 2, 2}, 1000);
  return net;
}

// RepVGG-A0's layout for 28x28 greyscale (Fashion-MNIST), but stages 0 and
// 1 keep stride 1. That is the adaptation resnet18-fmnist makes: on 224x224
// the stem stride and the max-pool take 224 to 56 before the first residual
// stage; on 28x28 both are dropped, so the stages run at 28, 14, 7, 4. Here
// stage 0 (the stem) and stage 1 play those two downsamplings, and stages
// 2, 3, 4 halve to 14, 7, 4 as resnet's layer2..4 do.
Network repvgg_fmnist(const ZooOptions& o) {
  Network net;
  net.name = "repvgg-fmnist";
  net.input_shape = {1, 28, 28};
  repvgg_a0_layout(net, o, {1, 1, 2, 2, 2}, 10);
  return net;
}

// VGG-16 (configuration D, no BatchNorm), torchvision layout and names.
Network vgg16(const ZooOptions& o) {
  Network net;
  net.name = "vgg16";
  net.input_shape = {3, 224, 224};
  Builder b(net);
  const int cfg[] = {64, 64, -1, 128, 128, -1, 256, 256, 256, -1, 512, 512, 512, -1, 512, 512, 512, -1};
  std::string x = net.input_name;
  int idx = 0;
  for (int c : cfg) {
    const std::string name = "features." + std::to_string(idx);
    if (c < 0) {
      x = b.pool(name, LayerKind::MaxPool, x, 2, 2, 0);
      idx += 1;
    } else {
      x = b.conv(name, x, scaled(c, o.width), 3, 1, 1);
      x = b.relu("features." + std::to_string(idx + 1), x);
      idx += 2;
    }
  }
  x = b.flatten("flatten", x);
  x = b.linear("classifier.0", x, scaled(4096, o.width));
  x = b.relu("classifier.1", x);
  x = b.linear("classifier.3", x, scaled(4096, o.width));
  x = b.relu("classifier.4", x);
  b.linear("classifier.6", x, o.classes > 0 ? o.classes : 1000);
  return net;
}

// Tiny nets for tests: every layer kind in a few hundred MACs-per-pixel.
Network tiny(const ZooOptions& o) {
  Network net;
  net.name = "tiny";
  net.input_shape = {3, 16, 16};
  Builder b(net);
  const std::int64_t c = scaled(8, o.width);
  std::string x = b.conv("conv1", net.input_name, c, 3, 1, 1);
  x = b.relu("relu1", x);
  std::string y = b.conv("conv2", x, c, 3, 1, 1);
  y = b.relu("relu2", y);
  y = b.conv("conv3", y, c, 3, 1, 1);
  x = b.add("add1", y, x);
  x = b.relu("relu3", x);
  x = b.pool("pool1", LayerKind::MaxPool, x, 2, 2, 0);
  x = b.conv("conv4", x, 2 * c, 3, 2, 1);
  x = b.relu("relu4", x);
  x = b.conv("conv5", x, 2 * c, 1, 1, 0);
  x = b.relu("relu5", x);
  x = b.gap("gap", x);
  x = b.flatten("flatten", x);
  b.linear("fc", x, o.classes > 0 ? o.classes : 10);
  return net;
}

// A MobileNet-like tiny net: depthwise and grouped convs, average pooling.
Network tiny_dw(const ZooOptions& o) {
  Network net;
  net.name = "tiny-dw";
  net.input_shape = {3, 16, 16};
  Builder b(net);
  const std::int64_t c = scaled(8, o.width);
  std::string x = b.conv("conv1", net.input_name, c, 3, 2, 1);
  x = b.relu("relu1", x);
  x = b.conv("dw2", x, c, 3, 1, 1, c);
  x = b.relu("relu2", x);
  x = b.conv("pw2", x, 2 * c, 1, 1, 0);
  x = b.relu("relu3", x);
  x = b.conv("gconv3", x, 2 * c, 3, 1, 1, 2);
  x = b.relu("relu4", x);
  x = b.pool("pool1", LayerKind::AvgPool, x, 2, 2, 0);
  x = b.conv("dw4", x, 2 * c, 5, 1, 2, 2 * c);
  x = b.relu("relu5", x);
  x = b.gap("gap", x);
  x = b.flatten("flatten", x);
  b.linear("fc", x, o.classes > 0 ? o.classes : 10);
  return net;
}

struct Entry {
  ZooEntry info;
  Network (*build)(const ZooOptions&);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> e = {
      {{"resnet18", "ResNet-18, ImageNet 3x224x224, BatchNorm folded (torchvision layout)"}, resnet18},
      {{"repvgg-a0", "RepVGG-A0 deploy form, 22 3x3 convs + FC, 3x224x224"}, repvgg_a0},
      {{"vgg16", "VGG-16 (config D), 3x224x224"}, vgg16},
      {{"resnet18-fmnist", "ResNet-18 for Fashion-MNIST 1x28x28, 3x3 stride-1 stem, no max-pool; width= multiplier"},
       resnet18_fmnist},
      {{"repvgg-fmnist",
        "RepVGG-A0 layout for Fashion-MNIST 1x28x28, 22 plain 3x3 convs, stages 0-1 stride 1; width= multiplier"},
       repvgg_fmnist},
      {{"tiny", "test net 3x16x16: convs, residual add, max-pool, strided conv, FC"}, tiny},
      {{"tiny-dw", "test net 3x16x16: depthwise and grouped convs, avg-pool, FC"}, tiny_dw},
  };
  return e;
}

ZooOptions parse_options(std::string_view spec, std::string_view name, std::string_view rest) {
  ZooOptions o;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view kv = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = kv.find('=');
    const std::string where = "network spec '" + std::string(spec) + "'";
    require(eq != std::string_view::npos,
            where + ": expected key=value after ':', got '" + std::string(kv) + "' (keys: width, classes, seed)");
    const std::string key(kv.substr(0, eq));
    const std::string value(kv.substr(eq + 1));
    try {
      std::size_t used = 0;
      if (key == "width") {
        o.width = std::stod(value, &used);
        require(used == value.size() && o.width > 0 && o.width <= 16,
                where + ": width must be in (0, 16], got '" + value + "'");
      } else if (key == "classes") {
        o.classes = std::stoll(value, &used);
        require(used == value.size() && o.classes >= 1,
                where + ": classes must be a positive integer, got '" + value + "'");
      } else if (key == "seed") {
        o.seed = std::stoull(value, &used);
        require(used == value.size(), where + ": seed must be a non-negative integer, got '" + value + "'");
      } else {
        throw Error(where + ": unknown key '" + key + "' (legal: width, classes, seed)");
      }
    } catch (const std::logic_error&) {
      throw Error(where + ": value '" + value + "' of '" + key + "' is not a number");
    }
  }
  (void)name;
  return o;
}

}  // namespace

const std::vector<ZooEntry>& zoo_entries() {
  static const std::vector<ZooEntry> out = [] {
    std::vector<ZooEntry> v;
    for (const auto& e : entries()) v.push_back(e.info);
    return v;
  }();
  return out;
}

bool is_zoo_spec(std::string_view spec) {
  const std::string_view name = spec.substr(0, spec.find(':'));
  for (const auto& e : entries())
    if (e.info.name == name) return true;
  return false;
}

Network build_zoo(std::string_view spec, bool with_weights) {
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  for (const auto& e : entries()) {
    if (e.info.name != name) continue;
    const ZooOptions o = parse_options(spec, name, rest);
    Network net = e.build(o);
    net.infer_shapes();
    if (with_weights) init_random_weights(net, o.seed);
    return net;
  }
  std::vector<std::string> names;
  for (const auto& e : entries()) names.push_back(e.info.name);
  throw Error("unknown network '" + std::string(name) + "' (zoo: " + join(names) + "; or give a .yaml or .onnx file)");
}

}  // namespace mixtd::net
