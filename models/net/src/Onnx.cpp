// ONNX import and export of a Network (see Onnx.h for what is accepted).
//
// Import walks the graph's nodes in order (ONNX requires topological order)
// and keeps, per tensor name, what that tensor is: an activation produced by
// a layer (or the network input), or a constant (initializer or Constant
// node). Weight-carrying ops take their weights from constants; the nodes
// exporters leave around (Identity, Dropout, Constant, zero Pad) only alias
// or annotate tensors and create no layer.
#include "mixtd/net/Onnx.h"

#include <onnx/onnx_pb.h>

#include <bit>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"

namespace mixtd::net {

namespace fs = std::filesystem;

namespace {

// raw_data is little-endian by the ONNX spec; both directions memcpy it.
static_assert(std::endian::native == std::endian::little, "ONNX raw_data I/O assumes a little-endian host");

// What save_onnx writes and load_onnx recognises as its own file: node names
// are then the layer names verbatim.
constexpr const char* kProducer = "mixtd";
constexpr std::int64_t kIrVersion = 7;
constexpr std::int64_t kOpset = 13;

constexpr const char* kSupportedOps =
    "Conv, BatchNormalization, Relu, MaxPool, AveragePool, GlobalAveragePool, Add, Sum, Gemm, "
    "MatMul, Flatten, Reshape, Pad, Identity, Dropout, Constant";

// Built with += rather than "'" + s: GCC 12 warns falsely (-Wrestrict,
// PR 105329) on `const char* + std::string&&`.
std::string enclosed(const char* open, const std::string& s, const char* close) {
  std::string out = open;
  out += s;
  out += close;
  return out;
}

std::string quoted(const fs::path& p) { return enclosed("'", p.string(), "'"); }

std::string ints_str(const std::vector<std::int64_t>& v) {
  return enclosed("[", join_ints(std::vector<long long>(v.begin(), v.end())), "]");
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::vector<std::int64_t> dims_of(const onnx::TensorProto& t) { return {t.dims().begin(), t.dims().end()}; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

// torch >= 1.13 names a node by its module scope and op: "/layer2/layer2.0/
// downsample/downsample.0/Conv". A scope component that extends the previous
// one ("layer2" -> "layer2.0", "downsample" -> "downsample.0") is a child of a
// Sequential and replaces it, so the module path is the joined survivors:
// "layer2.0.downsample.0", torchvision's own module name. `containers`, when
// given, collects every scope that has further scopes under it.
struct TorchScope {
  std::string module;  // "" for an op at top level ("/Flatten")
  std::string op;      // last component: "Conv", "Add_1"
};

std::optional<TorchScope> torch_scope(const std::string& node_name,
                                      std::unordered_set<std::string>* containers = nullptr) {
  if (node_name.size() < 2 || node_name[0] != '/') return std::nullopt;
  std::vector<std::string> comps = split(node_name.substr(1), '/');
  TorchScope s;
  s.op = comps.back();
  comps.pop_back();
  std::vector<std::string> path;
  for (std::size_t i = 0; i < comps.size(); ++i) {
    const std::string& c = comps[i];
    if (c.empty()) return std::nullopt;
    if (!path.empty() && c.size() > path.back().size() && c.compare(0, path.back().size() + 1, path.back() + ".") == 0)
      path.back() = c;
    else
      path.push_back(c);
    if (containers && i + 1 < comps.size()) containers->insert(join(path, "."));
  }
  s.module = join(path, ".");
  return s;
}

// ---------------------------------------------------------------- import

class Importer {
 public:
  Importer(fs::path path, const onnx::ModelProto& model)
      : path_(std::move(path)), model_(model), graph_(model.graph()) {}

  Network run() {
    check_model();
    read_initializers();
    read_input();
    scan_graph();
    for (int i = 0; i < graph_.node_size(); ++i) {
      node_ = &graph_.node(i);
      node_index_ = i;
      import_node();
    }
    node_ = nullptr;
    check_outputs();
    with_file([&] { net_.infer_shapes(); });
    check_flatten_sizes();
    with_file([&] { net_.check_weights(); });
    with_file([&] { net_.fold_batchnorm(); });
    return std::move(net_);
  }

 private:
  // An activation tensor: a layer's output (or the network input), its ONNX
  // rank (4 = NCHW, 2 = [N, features] after Flatten/Gemm), and the zero
  // padding of a Pad node that its consumer (Conv, AveragePool) absorbs.
  struct Activation {
    std::string layer;
    int rank = 4;
    std::int64_t pad_h = 0, pad_w = 0;
    bool padded() const { return pad_h != 0 || pad_w != 0; }
  };
  struct FlattenCheck {
    std::string layer, node;
    std::int64_t features;
  };
  struct Window {
    std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  };

  // ---- messages

  std::string node_label() const {
    if (!node_) return "";
    const std::string n = node_->name().empty() ? "#" + std::to_string(node_index_) : node_->name();
    return "node '" + n + "' (" + node_->op_type() + ")";
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(quoted(path_) + ": " + (node_ ? node_label() + ": " : std::string()) + msg);
  }
  template <class F>
  void with_file(F&& f) const {
    try {
      f();
    } catch (const Error& e) {
      throw Error(quoted(path_) + ": " + e.what());
    }
  }

  // ---- model-level

  void check_model() {
    auto bad = [&](const std::string& why) { throw Error(quoted(path_) + ": not a valid ONNX model (" + why + ")"); };
    if (model_.ir_version() <= 0) bad("no ir_version");
    if (!model_.has_graph()) bad("no graph");
    std::int64_t opset = -1;
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (opset < 0) bad("no opset_import for the default ONNX domain");
    require(opset >= 7, quoted(path_) + ": opset " + std::to_string(opset) +
                            " is too old (BatchNormalization and Pad changed meaning); re-export with opset 9..17");
    if (graph_.node_size() == 0) bad("the graph has no nodes");
    from_mixtd_ = model_.producer_name() == kProducer;
    const std::string& gname = graph_.name();
    // torch calls every graph "main_graph" (older: "torch-jit-export"); the
    // file name says more.
    net_.name = gname.empty() || gname == "main_graph" || gname == "torch-jit-export" || gname == "torch_jit"
                    ? path_.stem().string()
                    : gname;
  }

  void read_initializers() {
    for (const auto& t : graph_.initializer()) {
      consts_[t.name()] = &t;
      initializers_.insert(t.name());
    }
  }

  void read_input() {
    const onnx::ValueInfoProto* in = nullptr;
    std::vector<std::string> names;
    for (const auto& v : graph_.input()) {
      if (consts_.count(v.name())) continue;  // old exporters list initializers as inputs too
      names.push_back(v.name());
      in = &v;
    }
    require(names.size() == 1, quoted(path_) + ": the graph has " + std::to_string(names.size()) +
                                   " inputs that are not initializers (" + join(names) +
                                   "); a network takes exactly one image input [N, C, H, W]");
    const auto& type = in->type();
    require(type.has_tensor_type() && type.tensor_type().elem_type() == onnx::TensorProto::FLOAT,
            quoted(path_) + ": input '" + in->name() + "' must be a float32 tensor [N, C, H, W]");
    const auto& shape = type.tensor_type().shape();
    std::vector<std::string> dims;
    bool fixed = shape.dim_size() == 4;
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
      if (i > 0 && !(d.has_dim_value() && d.dim_value() > 0)) fixed = false;
    }
    require(fixed, quoted(path_) + ": input '" + in->name() + "' has shape [" + join(dims) +
                       "]; expected [N, C, H, W] with C, H and W fixed positive numbers (N may be symbolic)");
    net_.input_name = in->name();
    net_.input_shape = {shape.dim(1).dim_value(), shape.dim(2).dim_value(), shape.dim(3).dim_value()};
    batch_ = shape.dim(0).has_dim_value() ? shape.dim(0).dim_value() : 0;
    acts_[in->name()] = {in->name(), 4};
    used_names_.insert(in->name());
  }

  // Consumer counts (a MatMul's bias Add must be its only reader) and torch
  // module scopes that contain other scopes (their own ops get a suffix).
  void scan_graph() {
    for (const auto& n : graph_.node()) {
      for (const auto& i : n.input())
        if (!i.empty()) ++uses_[i];
      torch_scope(n.name(), &containers_);
    }
    for (const auto& o : graph_.output()) ++uses_[o.name()];
  }

  void check_outputs() {
    for (const auto& o : graph_.output()) {
      const std::string where = quoted(path_) + ": graph output '" + o.name() + "'";
      require(!consts_.count(o.name()), where + " is a constant; outputs must be computed from the input");
      const auto it = acts_.find(o.name());
      require(it != acts_.end(), where + " is not produced by any node");
      require(it->second.layer != net_.input_name,
              where + " is the network input itself; a network needs at least one layer");
      require(!it->second.padded(),
              where + " comes from a Pad node; padding is supported only before Conv or AveragePool");
    }
  }

  // Reshape to [-1, K] or [N, K] is a flatten only if K is the whole image.
  void check_flatten_sizes() const {
    for (const auto& c : flatten_checks_) {
      const Layer* l = net_.find(c.layer);
      require(l->in_shape.numel() == c.features, quoted(path_) + ": node '" + c.node + "' (Reshape): target has " +
                                                     std::to_string(c.features) + " features but its input is " +
                                                     l->in_shape.str() + " = " + std::to_string(l->in_shape.numel()) +
                                                     " per image; only a flatten of the whole image is supported");
    }
  }

  // ---- node inputs

  bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }

  const std::string& input_name(int i, const char* role) const {
    if (!has_input(i)) fail("missing input " + std::to_string(i) + " (" + role + ")");
    return node_->input(i);
  }

  bool is_constant(int i) const { return has_input(i) && consts_.count(node_->input(i)); }

  // An activation input, possibly carrying a pending zero Pad.
  Activation activation(int i, const char* role = "data") const {
    const std::string& n = input_name(i, role);
    if (consts_.count(n))
      fail("input '" + n + "' (" + role + ") is a constant; expected a tensor computed from the network input");
    const auto it = acts_.find(n);
    if (it == acts_.end())
      fail("input '" + n + "' is not produced by an earlier node (ONNX requires topologically sorted nodes)");
    return it->second;
  }

  // An activation input that no Pad node has padded.
  Activation plain(int i, const char* role = "data") const {
    Activation a = activation(i, role);
    if (a.padded())
      fail("input '" + node_->input(i) +
           "' comes from a Pad node; zero padding is supported only before Conv or AveragePool");
    return a;
  }

  // An NCHW activation input; `pad_ok` for the ops that absorb a Pad.
  Activation image(int i, bool pad_ok = false) const {
    Activation a = pad_ok ? activation(i) : plain(i);
    if (a.rank != 4) fail("input '" + node_->input(i) + "' is a flattened [N, features] tensor; this op needs NCHW");
    return a;
  }

  const onnx::TensorProto& constant(int i, const char* role) const {
    const std::string& n = input_name(i, role);
    const auto it = consts_.find(n);
    if (it == consts_.end()) {
      if (acts_.count(n))
        fail("input '" + n + "' (" + role + ") is computed at run time; it must be an initializer or a Constant node");
      fail("input '" + n + "' (" + role + ") is not produced by an earlier node nor an initializer");
    }
    return *it->second;
  }

  std::string tensor_label(const std::string& name) const {
    return (initializers_.count(name) ? "initializer '" : "constant '") + name + "'";
  }

  std::int64_t numel(const std::string& name, const onnx::TensorProto& t) const {
    std::int64_t n = 1;
    for (const auto d : t.dims()) {
      if (d < 0 || d > (std::int64_t{1} << 32)) fail(tensor_label(name) + " has a bad dimension " + std::to_string(d));
      n *= d;
      if (n > (std::int64_t{1} << 34)) fail(tensor_label(name) + " has too many elements");
    }
    return n;
  }

  void check_location(const std::string& name, const onnx::TensorProto& t) const {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail(tensor_label(name) +
           " is stored in an external data file, which is not supported; "
           "export with the weights inside the .onnx file");
  }

  std::vector<float> floats(int i, const char* role) const {
    const onnx::TensorProto& t = constant(i, role);
    const std::string& name = node_->input(i);
    check_location(name, t);
    if (t.data_type() != onnx::TensorProto::FLOAT)
      fail(tensor_label(name) + " (" + role + ") has data type " +
           onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())) +
           "; weights must be FLOAT (float32)");
    const std::int64_t n = numel(name, t);
    const auto un = static_cast<std::size_t>(n);
    if (t.has_raw_data()) {
      if (t.raw_data().size() != un * sizeof(float))
        fail(tensor_label(name) + " has " + std::to_string(t.raw_data().size()) + " bytes of raw_data, expected " +
             std::to_string(un * sizeof(float)) + " for shape " + ints_str(dims_of(t)));
      std::vector<float> out(un);
      if (n > 0) std::memcpy(out.data(), t.raw_data().data(), un * sizeof(float));
      return finite(name, role, std::move(out));
    }
    if (static_cast<std::size_t>(t.float_data_size()) != un)
      fail(tensor_label(name) + " has " + std::to_string(t.float_data_size()) + " values, expected " +
           std::to_string(n) + " for shape " + ints_str(dims_of(t)));
    return finite(name, role, {t.float_data().begin(), t.float_data().end()});
  }

  // NaN or Inf in a weight would pass every later step and poison every
  // output (or fail an SVD far from here): refused at import.
  std::vector<float> finite(const std::string& name, const char* role, std::vector<float> v) const {
    for (std::size_t k = 0; k < v.size(); ++k)
      if (!std::isfinite(v[k]))
        fail(tensor_label(name) + " (" + role + ") has a non-finite value at flat index " + std::to_string(k) + " (" +
             (std::isnan(v[k]) ? "nan"
              : v[k] > 0       ? "inf"
                               : "-inf") +
             "); weights must be finite");
    return v;
  }

  std::vector<std::int64_t> int64s(int i, const char* role) const {
    const onnx::TensorProto& t = constant(i, role);
    const std::string& name = node_->input(i);
    check_location(name, t);
    if (t.data_type() != onnx::TensorProto::INT64)
      fail(tensor_label(name) + " (" + role + ") has data type " +
           onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())) +
           "; expected INT64");
    const auto un = static_cast<std::size_t>(numel(name, t));
    if (t.has_raw_data()) {
      if (t.raw_data().size() != un * sizeof(std::int64_t))
        fail(tensor_label(name) + " has " + std::to_string(t.raw_data().size()) + " bytes of raw_data, expected " +
             std::to_string(un * sizeof(std::int64_t)));
      std::vector<std::int64_t> out(un);
      if (un > 0) std::memcpy(out.data(), t.raw_data().data(), un * sizeof(std::int64_t));
      return out;
    }
    if (static_cast<std::size_t>(t.int64_data_size()) != un)
      fail(tensor_label(name) + " has " + std::to_string(t.int64_data_size()) + " values, expected " +
           std::to_string(un));
    return {t.int64_data().begin(), t.int64_data().end()};
  }

  // True if output `i` of the current node exists and something reads it.
  bool output_used(int i) const {
    if (i >= node_->output_size() || node_->output(i).empty()) return false;
    const auto it = uses_.find(node_->output(i));
    return it != uses_.end() && it->second > 0;
  }

  // ---- attributes

  const onnx::AttributeProto* attr(const char* name) const {
    for (const auto& a : node_->attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::int64_t attr_int(const char* name, std::int64_t def) const {
    const auto* a = attr(name);
    return a ? a->i() : def;
  }
  float attr_float(const char* name, float def) const {
    const auto* a = attr(name);
    return a ? a->f() : def;
  }
  std::string attr_string(const char* name, const std::string& def) const {
    const auto* a = attr(name);
    return a ? a->s() : def;
  }
  std::vector<std::int64_t> attr_ints(const char* name, std::vector<std::int64_t> def) const {
    const auto* a = attr(name);
    if (!a) return def;
    return {a->ints().begin(), a->ints().end()};
  }

  // kernel_shape, strides, pads, dilations and auto_pad of Conv and the pools.
  // `kernel` comes from the conv weight when kernel_shape is absent.
  Window read_window(std::optional<std::pair<std::int64_t, std::int64_t>> kernel) const {
    Window w;
    std::vector<std::int64_t> k = attr_ints("kernel_shape", {});
    if (k.empty()) {
      if (!kernel) fail("kernel_shape is missing");
      k = {kernel->first, kernel->second};
    }
    if (k.size() != 2) fail("kernel_shape " + ints_str(k) + " is not 2-D; only 2-D (NCHW) windows are supported");
    if (kernel && (k[0] != kernel->first || k[1] != kernel->second))
      fail("kernel_shape " + ints_str(k) + " does not match the weight's " + ints_str({kernel->first, kernel->second}));
    const auto s = attr_ints("strides", {1, 1});
    if (s.size() != 2) fail("strides " + ints_str(s) + " must have 2 values");
    const auto d = attr_ints("dilations", {1, 1});
    if (d != std::vector<std::int64_t>{1, 1}) fail("dilations " + ints_str(d) + " are not supported; legal: [1, 1]");
    const std::string auto_pad = attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID")
      fail("auto_pad '" + auto_pad + "' is not supported; legal: NOTSET (explicit pads) or VALID");
    const auto p = auto_pad == "VALID" ? std::vector<std::int64_t>{0, 0, 0, 0} : attr_ints("pads", {0, 0, 0, 0});
    if (p.size() != 4) fail("pads " + ints_str(p) + " must have 4 values [top, left, bottom, right]");
    if (p[0] != p[2] || p[1] != p[3])
      fail("pads " + ints_str(p) + " are asymmetric; legal: top == bottom and left == right");
    w.kh = k[0];
    w.kw = k[1];
    w.sh = s[0];
    w.sw = s[1];
    w.ph = p[0];
    w.pw = p[1];
    return w;
  }

  // ---- layers

  // A readable, unique layer name for the current node (see torch_scope).
  std::string layer_name(const std::string& weight_name) {
    std::vector<std::string> candidates;
    const std::string& raw = node_->name();
    if (from_mixtd_) candidates.push_back(raw);
    if (const auto scope = torch_scope(raw)) {
      // A scope with sub-scopes is a container (a block): its own ops, like
      // a BasicBlock's residual Add, are named "<block>.add".
      if (!scope->module.empty() && !containers_.count(scope->module)) candidates.push_back(scope->module);
      candidates.push_back((scope->module.empty() ? "" : scope->module + ".") + lower(scope->op));
    }
    const std::string suffix = ".weight";
    if (weight_name.size() > suffix.size() && weight_name.compare(0, 6, "onnx::") != 0 &&
        weight_name.compare(weight_name.size() - suffix.size(), suffix.size(), suffix) == 0)
      candidates.push_back(weight_name.substr(0, weight_name.size() - suffix.size()));
    if (!raw.empty() && raw[0] != '/') candidates.push_back(raw);
    const std::string fallback = lower(node_->op_type()) + "_" + std::to_string(node_index_);
    candidates.push_back(fallback);
    for (const auto& c : candidates)
      if (!c.empty() && used_names_.insert(c).second) return c;
    for (int k = 2;; ++k)
      if (std::string c = fallback + "_" + std::to_string(k); used_names_.insert(c).second) return c;
  }

  std::string add_layer(Layer l, const std::string& weight_name = {}) {
    l.name = layer_name(weight_name);
    with_file([&] { net_.add(std::move(l)); });
    return net_.layers.back().name;
  }

  void define(int out, Activation a) {
    if (out < node_->output_size() && !node_->output(out).empty()) acts_[node_->output(out)] = std::move(a);
  }

  Layer layer_on(LayerKind kind, const Activation& in) const {
    Layer l;
    l.kind = kind;
    l.inputs = {in.layer};
    return l;
  }

  // ---- ops

  void import_node() {
    const std::string& op = node_->op_type();
    const std::string& domain = node_->domain();
    if (!domain.empty() && domain != "ai.onnx") fail_unsupported(domain + ":" + op);
    // Every op below defines output 0 (fuzz_onnx: a Constant without outputs
    // read past the end of the output list).
    if (node_->output_size() < 1 || node_->output(0).empty())
      fail("has no output (every " + op + " node must name its output 0)");
    if (op == "Conv") return conv();
    if (op == "BatchNormalization") return batchnorm();
    if (op == "Relu") return simple(LayerKind::ReLU);
    if (op == "MaxPool") return maxpool();
    if (op == "AveragePool") return avgpool();
    if (op == "GlobalAveragePool") return global_avgpool();
    if (op == "Add") return add();
    if (op == "Sum") return sum();
    if (op == "Gemm") return gemm();
    if (op == "MatMul") return matmul();
    if (op == "Flatten") return flatten();
    if (op == "Reshape") return reshape();
    if (op == "Pad") return pad();
    if (op == "Identity" || op == "Dropout") return alias();
    if (op == "Constant") return constant_node();
    fail_unsupported(op);
  }

  [[noreturn]] void fail_unsupported(const std::string& op) const {
    const std::string n = node_->name().empty() ? "#" + std::to_string(node_index_) : node_->name();
    // The usual way to meet Shape: x.view(x.size(0), -1) exported with a
    // dynamic batch, which computes the target shape at run time.
    const std::string hint = op == "Shape" ? "; for x.view(x.size(0), -1) use torch.flatten(x, 1) instead" : "";
    throw Error(quoted(path_) + ": node '" + n + "' has unsupported op '" + op + "' (supported: " + kSupportedOps +
                ")" + hint);
  }

  void conv() {
    const Activation x = image(0, /*pad_ok=*/true);
    const onnx::TensorProto& w = constant(1, "weight");
    const auto wd = dims_of(w);
    if (wd.size() != 4)
      fail("weight '" + node_->input(1) + "' has shape " + ints_str(wd) +
           "; a 2-D conv weight is [out, in/group, kh, kw]");
    const Window win = read_window(std::make_pair(wd[2], wd[3]));
    Layer l = layer_on(LayerKind::Conv2d, x);
    l.conv.out_channels = wd[0];
    l.conv.kh = win.kh;
    l.conv.kw = win.kw;
    l.conv.sh = win.sh;
    l.conv.sw = win.sw;
    l.conv.ph = win.ph + x.pad_h;  // a preceding zero Pad is the same as conv padding
    l.conv.pw = win.pw + x.pad_w;
    l.conv.groups = attr_int("group", 1);
    l.weight = floats(1, "weight");
    l.conv.bias = has_input(2);
    if (l.conv.bias) l.bias = floats(2, "bias");
    define(0, {add_layer(std::move(l), node_->input(1)), 4});
  }

  void batchnorm() {
    const Activation x = plain(0);
    if (attr_int("training_mode", 0) != 0) fail("training_mode = 1 is not supported; export the model in eval mode");
    if (attr_int("spatial", 1) != 1) fail("spatial = 0 is not supported; legal: 1 (per-channel statistics)");
    for (int i = 1; i < node_->output_size(); ++i)
      if (output_used(i))
        fail("its running-statistics output '" + node_->output(i) +
             "' is used (training mode); export the model in eval mode");
    Layer l = layer_on(LayerKind::BatchNorm, x);
    l.bn.eps = attr_float("epsilon", 1e-5f);
    l.weight = floats(1, "scale");
    l.bias = floats(2, "bias");
    l.mean = floats(3, "mean");
    l.var = floats(4, "var");
    define(0, {add_layer(std::move(l), node_->input(1)), x.rank});
  }

  void simple(LayerKind kind) {
    const Activation x = plain(0);
    define(0, {add_layer(layer_on(kind, x)), x.rank});
  }

  void set_pool(Layer& l, const Window& w) const {
    l.pool.kh = w.kh;
    l.pool.kw = w.kw;
    l.pool.sh = w.sh;
    l.pool.sw = w.sw;
    l.pool.ph = w.ph;
    l.pool.pw = w.pw;
  }

  void check_ceil_mode() const {
    if (attr_int("ceil_mode", 0) != 0) fail("ceil_mode = 1 is not supported (PyTorch ceil_mode=True); legal: 0");
  }

  void maxpool() {
    const Activation x = image(0);
    check_ceil_mode();
    if (output_used(1))
      fail("its Indices output '" + node_->output(1) + "' is used; only the pooled values are supported");
    Layer l = layer_on(LayerKind::MaxPool, x);
    set_pool(l, read_window(std::nullopt));
    define(0, {add_layer(std::move(l)), 4});
  }

  void avgpool() {
    const Activation x = image(0, /*pad_ok=*/true);
    check_ceil_mode();
    const Window w = read_window(std::nullopt);
    Layer l = layer_on(LayerKind::AvgPool, x);
    set_pool(l, w);
    // ONNX's default is count_include_pad = 0. Without padding the flag has
    // no effect; keep PyTorch's default (true) then, as the zoo does.
    const bool own_pads = w.ph != 0 || w.pw != 0;
    const auto* cip = attr("count_include_pad");
    l.pool.count_include_pad = cip ? cip->i() != 0 : !own_pads;
    if (x.padded()) {
      // torch exports AvgPool2d(padding=p) as Pad(p) + AveragePool(pads 0):
      // explicit zeros that always count in the divisor.
      if (own_pads && !l.pool.count_include_pad)
        fail("input '" + node_->input(0) +
             "' is zero-padded by a Pad node and the pool pads more with count_include_pad = 0; "
             "this mix is not representable");
      l.pool.ph += x.pad_h;
      l.pool.pw += x.pad_w;
      l.pool.count_include_pad = true;
    }
    define(0, {add_layer(std::move(l)), 4});
  }

  void global_avgpool() {
    const Activation x = image(0);
    define(0, {add_layer(layer_on(LayerKind::GlobalAvgPool, x)), 4});
  }

  void add() {
    if (node_->input_size() != 2) fail("expected 2 inputs, got " + std::to_string(node_->input_size()));
    const bool c0 = is_constant(0), c1 = is_constant(1);
    if (c0 && c1) fail("both inputs are constants; fold them before export (do_constant_folding=True)");
    if (c0 || c1) return matmul_bias(c0 ? 1 : 0, c0 ? 0 : 1);
    add_layers({plain(0), plain(1)});
  }

  void sum() {
    std::vector<Activation> in;
    for (int i = 0; i < node_->input_size(); ++i) in.push_back(plain(i));
    if (in.empty()) fail("has no inputs");
    if (in.size() == 1) return define(0, in[0]);
    add_layers(in);
  }

  void add_layers(const std::vector<Activation>& in) {
    Layer l = layer_on(LayerKind::Add, in[0]);
    l.inputs.clear();
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (in[i].rank != in[0].rank)
        fail("inputs '" + node_->input(0) + "' and '" + node_->input(static_cast<int>(i)) +
             "' have different ranks; only same-shape adds are supported");
      l.inputs.push_back(in[i].layer);
    }
    define(0, {add_layer(std::move(l)), in[0].rank});
  }

  // x @ W + b: torch's Linear on a non-2-D input, or hand-written. The Add
  // becomes the bias of the MatMul's Linear layer.
  void matmul_bias(int act, int cst) {
    const Activation x = plain(act);
    const std::string& tensor = node_->input(act);
    const auto it = matmul_out_.find(x.layer);
    const auto uses = uses_.find(tensor);
    if (it == matmul_out_.end() || it->second != tensor || uses == uses_.end() || uses->second != 1)
      fail("adds constant '" + node_->input(cst) + "' to '" + tensor +
           "'; an Add of a constant is supported only as the bias right after a MatMul whose output feeds "
           "nothing else");
    Layer* l = net_.find(x.layer);
    const auto bd = dims_of(constant(cst, "bias"));
    const std::int64_t out = l->linear.out_features;
    const bool ok = (bd.size() == 1 && bd[0] == out) || (bd.size() == 2 && bd[0] == 1 && bd[1] == out);
    if (!ok)
      fail("bias '" + node_->input(cst) + "' has shape " + ints_str(bd) + "; legal: [" + std::to_string(out) +
           "] or [1, " + std::to_string(out) + "]");
    l->bias = floats(cst, "bias");
    l->linear.bias = true;
    matmul_out_.erase(it);
    define(0, x);
  }

  Activation matrix_input() const {
    const Activation x = plain(0);
    if (x.rank != 2)
      fail("input '" + node_->input(0) + "' is a 4-D NCHW tensor; a " + node_->op_type() +
           " needs [N, features] (Flatten first)");
    return x;
  }

  std::vector<std::int64_t> matrix_dims(int i, const char* role) const {
    const auto d = dims_of(constant(i, role));
    if (d.size() != 2) fail(tensor_label(node_->input(i)) + " has shape " + ints_str(d) + "; expected a 2-D matrix");
    return d;
  }

  // [rows, cols] row-major -> [cols, rows].
  static std::vector<float> transpose(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
    std::vector<float> t(m.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        t[static_cast<std::size_t>(c * rows + r)] = m[static_cast<std::size_t>(r * cols + c)];
    return t;
  }

  void gemm() {
    const Activation x = matrix_input();
    const auto bd = matrix_dims(1, "weight");
    const float alpha = attr_float("alpha", 1.0f), beta = attr_float("beta", 1.0f);
    const std::int64_t trans_a = attr_int("transA", 0), trans_b = attr_int("transB", 0);
    if (alpha != 1.0f) fail("alpha = " + std::to_string(alpha) + " is not supported; legal: 1");
    if (trans_a != 0) fail("transA = " + std::to_string(trans_a) + " is not supported; legal: 0");
    if (trans_b != 0 && trans_b != 1) fail("transB = " + std::to_string(trans_b) + "; legal: 0 or 1");
    // mixtd stores [out, in], which is B itself when transB = 1.
    const std::int64_t out = trans_b ? bd[0] : bd[1], in = trans_b ? bd[1] : bd[0];
    Layer l = layer_on(LayerKind::Linear, x);
    l.linear.out_features = out;
    l.weight = floats(1, "weight");
    if (!trans_b) l.weight = transpose(l.weight, in, out);
    l.linear.bias = has_input(2);
    if (l.linear.bias) {
      if (beta != 1.0f) fail("beta = " + std::to_string(beta) + " is not supported; legal: 1");
      const auto cd = dims_of(constant(2, "bias"));
      const bool ok = (cd.size() == 1 && cd[0] == out) || (cd.size() == 2 && cd[0] == 1 && cd[1] == out);
      if (!ok)
        fail("bias '" + node_->input(2) + "' has shape " + ints_str(cd) + "; legal: [" + std::to_string(out) +
             "] or [1, " + std::to_string(out) + "]");
      l.bias = floats(2, "bias");
    }
    define(0, {add_layer(std::move(l), node_->input(1)), 2});
  }

  void matmul() {
    const Activation x = matrix_input();
    const auto bd = matrix_dims(1, "weight");
    Layer l = layer_on(LayerKind::Linear, x);
    l.linear.out_features = bd[1];
    l.linear.bias = false;  // until an Add supplies one (matmul_bias)
    l.weight = transpose(floats(1, "weight"), bd[0], bd[1]);
    const std::string name = add_layer(std::move(l), node_->input(1));
    matmul_out_[name] = node_->output(0);
    define(0, {name, 2});
  }

  void flatten() {
    const Activation x = plain(0);
    std::int64_t axis = attr_int("axis", 1);
    if (axis < 0) axis += x.rank;
    if (axis != 1)
      fail("axis = " + std::to_string(attr_int("axis", 1)) + " is not supported; legal: 1 (keep the batch)");
    define(0, {add_layer(layer_on(LayerKind::Flatten, x)), 2});
  }

  void reshape() {
    const Activation x = plain(0);
    if (!is_constant(1) && has_input(1) && acts_.count(node_->input(1)))
      fail("the target shape '" + node_->input(1) +
           "' is computed at run time (e.g. x.view(x.size(0), -1)); use torch.flatten(x, 1) or a constant shape");
    const auto s = int64s(1, "shape");
    const bool allowzero = attr_int("allowzero", 0) != 0;
    const bool batch_first =
        s.size() == 2 && (s[0] == 1 || (s[0] == 0 && !allowzero) || (batch_ > 0 && s[0] == batch_));
    const bool flat = s.size() == 2 && ((batch_first && (s[1] == -1 || s[1] > 0)) || (s[0] == -1 && s[1] > 0));
    if (!flat)
      fail("target shape " + ints_str(s) +
           " is not a flatten; legal: [0, -1], [1, -1], [N, -1], [-1, K], [1, K] "
           "with K = C*H*W of the input");
    const std::string name = add_layer(layer_on(LayerKind::Flatten, x));
    if (s[1] > 0) flatten_checks_.push_back({name, node_->name(), s[1]});
    define(0, {name, 2});
  }

  // Zero padding of H and W, absorbed by the next Conv or AveragePool.
  void pad() {
    const Activation x = image(0);
    const std::string mode = attr_string("mode", "constant");
    if (mode != "constant") fail("mode '" + mode + "' is not supported; legal: constant (zero padding)");
    if (has_input(3)) fail("the axes input is not supported; pad all four dimensions");
    // opset >= 11: pads and value are inputs; before: attributes.
    const auto p = has_input(1) ? int64s(1, "pads") : attr_ints("pads", {});
    float value = attr_float("value", 0.0f);
    if (has_input(2)) {
      const auto v = floats(2, "constant_value");
      if (v.size() != 1) fail("constant_value must be a scalar");
      value = v[0];
    }
    if (value != 0.0f) fail("pads with value " + std::to_string(value) + "; legal: 0");
    if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0 || p[2] != p[6] || p[3] != p[7] || p[2] < 0 ||
        p[3] < 0)
      fail("pads " + ints_str(p) + " are not supported; legal: [0, 0, h, w, 0, 0, h, w] (symmetric, H and W only)");
    define(0, {x.layer, 4, p[2], p[3]});
  }

  void alias() {
    const std::string& in = input_name(0, "input");
    if (node_->op_type() == "Dropout" && output_used(1))
      fail("its mask output '" + node_->output(1) + "' is used; export the model in eval mode");
    if (const auto c = consts_.find(in); c != consts_.end()) {
      consts_[node_->output(0)] = c->second;
      if (initializers_.count(in)) initializers_.insert(node_->output(0));
      return;
    }
    define(0, activation(0));
  }

  void constant_node() {
    if (node_->attribute_size() != 1) fail("expected exactly one value attribute");
    const auto& a = node_->attribute(0);
    const std::string& out = node_->output(0);
    if (a.name() == "value") {
      consts_[out] = &a.t();
      return;
    }
    onnx::TensorProto& t = owned_.emplace_back();
    if (a.name() == "value_float" || a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      if (a.name() == "value_float")
        t.add_float_data(a.f());
      else {
        for (float f : a.floats()) t.add_float_data(f);
        t.add_dims(a.floats_size());
      }
    } else if (a.name() == "value_int" || a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      if (a.name() == "value_int")
        t.add_int64_data(a.i());
      else {
        for (auto i : a.ints()) t.add_int64_data(i);
        t.add_dims(a.ints_size());
      }
    } else {
      fail("attribute '" + a.name() + "' is not supported; legal: value, value_float(s), value_int(s)");
    }
    consts_[out] = &t;
  }

  const fs::path path_;
  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  Network net_;
  bool from_mixtd_ = false;
  std::int64_t batch_ = 0;  // fixed batch size of the input, 0 if symbolic

  std::unordered_map<std::string, Activation> acts_;
  std::unordered_map<std::string, const onnx::TensorProto*> consts_;
  std::unordered_set<std::string> initializers_;             // names of consts_ that are initializers (messages)
  std::deque<onnx::TensorProto> owned_;                      // Constant nodes' value_ints etc.; stable addresses
  std::unordered_map<std::string, int> uses_;                // readers per tensor (graph outputs count)
  std::unordered_set<std::string> containers_;               // torch scopes holding sub-scopes
  std::unordered_set<std::string> used_names_;               // layer names taken (and the input's)
  std::unordered_map<std::string, std::string> matmul_out_;  // bias-less MatMul layer -> its output tensor
  std::vector<FlattenCheck> flatten_checks_;

  const onnx::NodeProto* node_ = nullptr;  // the node being imported, for messages
  int node_index_ = 0;
};

// ---------------------------------------------------------------- export

class Exporter {
 public:
  Exporter(const Network& net, fs::path path) : net_(net), path_(std::move(path)) {}

  void run() {
    const Network shapes = shapes_of(net_);
    model_.set_ir_version(kIrVersion);
    model_.set_producer_name(kProducer);
    model_.set_doc_string("mixtd network '" + net_.name + "'");
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    g_ = model_.mutable_graph();
    g_->set_name(net_.name);
    claim(net_.input_name, "the network input");
    add_value_info(g_->add_input(), net_.input_name, net_.input_shape, 4);
    rank_[net_.input_name] = 4;
    for (std::size_t i = 0; i < net_.layers.size(); ++i) claim(net_.layers[i].name, "a layer");
    for (std::size_t i = 0; i < net_.layers.size(); ++i) write_layer(net_.layers[i], shapes.layers[i]);
    for (const auto& o : net_.outputs()) add_value_info(g_->add_output(), o, shapes.shape_of(o), rank_.at(o));
    if (model_.ByteSizeLong() > static_cast<std::size_t>(INT_MAX))
      fail("the model is " + std::to_string(model_.ByteSizeLong()) +
           " bytes; a protobuf ONNX file must stay under 2 GB");
    write_file_atomic(path_, [&](std::ostream& os) {
      if (!model_.SerializeToOstream(&os)) fail("protobuf serialisation failed");
    });
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error("cannot write " + quoted(path_) + ": " + msg); }

  // The layers without their weights, shapes inferred: validates `net`
  // (naming the bad layer) without copying hundreds of MB of floats.
  Network shapes_of(const Network& net) const {
    Network s;
    s.name = net.name;
    s.input_name = net.input_name;
    s.input_shape = net.input_shape;
    try {
      for (const auto& l : net.layers) {
        Layer c;
        c.name = l.name;
        c.kind = l.kind;
        c.inputs = l.inputs;
        c.conv = l.conv;
        c.pool = l.pool;
        c.linear = l.linear;
        c.bn = l.bn;
        s.add(std::move(c));
      }
      s.infer_shapes();
    } catch (const Error& e) {
      fail(e.what());
    }
    for (std::size_t i = 0; i < net.layers.size(); ++i) check_weights(net.layers[i], s.layers[i]);
    return s;
  }

  void check_weights(const Layer& l, const Layer& shaped) const {
    const std::int64_t ws = shaped.expected_weight_size(), bs = shaped.expected_bias_size();
    if (ws == 0) return;
    const std::string where = "layer '" + l.name + "' (" + std::string(to_string(l.kind)) + ")";
    if (!l.has_weights())
      fail(where +
           " has no weights; ONNX carries weights, so save a network that has them "
           "(e.g. build_zoo(spec, /*with_weights=*/true))");
    auto check = [&](const std::vector<float>& v, std::int64_t want, const char* what) {
      if (static_cast<std::int64_t>(v.size()) != want)
        fail(where + ": " + what + " has " + std::to_string(v.size()) + " elements, expected " + std::to_string(want));
    };
    check(l.weight, ws, "weight");
    check(l.bias, bs, "bias");
    if (l.kind == LayerKind::BatchNorm) {
      check(l.mean, bs, "running mean");
      check(l.var, bs, "running var");
    }
  }

  // Every tensor name (input, layer outputs, initializers) must be unique.
  void claim(const std::string& name, const std::string& what) {
    if (!tensor_names_.insert(name).second)
      fail("tensor name '" + name + "' (" + what + ") is already used by another tensor; rename the layer");
  }

  static void add_value_info(onnx::ValueInfoProto* v, const std::string& name, const Shape& s, int rank) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = tt->mutable_shape();
    shape->add_dim()->set_dim_param("batch");
    shape->add_dim()->set_dim_value(s.c);
    if (rank == 4) {
      shape->add_dim()->set_dim_value(s.h);
      shape->add_dim()->set_dim_value(s.w);
    }
  }

  std::string add_initializer(const std::string& name, const std::vector<std::int64_t>& dims,
                              const std::vector<float>& data) {
    claim(name, "a weight");
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(data.data(), data.size() * sizeof(float));
    return name;
  }

  onnx::NodeProto* add_node(const std::string& name, const char* op, std::vector<std::string> inputs,
                            const std::string& output) {
    auto* n = g_->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }

  static void set_ints(onnx::NodeProto* n, const char* name, std::vector<std::int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void set_int(onnx::NodeProto* n, const char* name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void set_float(onnx::NodeProto* n, const char* name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  void need_image(const Layer& l) const {
    const std::string& in = l.inputs[0];
    if (rank_.at(in) != 4)
      fail("layer '" + l.name + "' (" + std::string(to_string(l.kind)) + ") reads '" + in +
           "', a flattened [N, features] tensor; its ONNX op needs NCHW");
  }

  void write_layer(const Layer& l, const Layer& shaped) {
    const std::string& in = l.inputs[0];
    int rank = rank_.at(in);
    switch (l.kind) {
      case LayerKind::Conv2d: {
        need_image(l);
        const auto& c = l.conv;
        std::vector<std::string> ins{
            in,
            add_initializer(l.name + ".weight", {c.out_channels, shaped.in_shape.c / c.groups, c.kh, c.kw}, l.weight)};
        if (c.bias) ins.push_back(add_initializer(l.name + ".bias", {c.out_channels}, l.bias));
        auto* n = add_node(l.name, "Conv", ins, l.name);
        set_ints(n, "kernel_shape", {c.kh, c.kw});
        set_ints(n, "strides", {c.sh, c.sw});
        set_ints(n, "pads", {c.ph, c.pw, c.ph, c.pw});
        set_ints(n, "dilations", {1, 1});
        set_int(n, "group", c.groups);
        break;
      }
      case LayerKind::BatchNorm: {
        const std::int64_t ch = shaped.in_shape.c;
        auto* n = add_node(
            l.name, "BatchNormalization",
            {in, add_initializer(l.name + ".weight", {ch}, l.weight), add_initializer(l.name + ".bias", {ch}, l.bias),
             add_initializer(l.name + ".running_mean", {ch}, l.mean),
             add_initializer(l.name + ".running_var", {ch}, l.var)},
            l.name);
        set_float(n, "epsilon", static_cast<float>(l.bn.eps));
        break;
      }
      case LayerKind::ReLU:
        add_node(l.name, "Relu", {in}, l.name);
        break;
      case LayerKind::MaxPool:
      case LayerKind::AvgPool: {
        need_image(l);
        const auto& p = l.pool;
        auto* n = add_node(l.name, l.kind == LayerKind::MaxPool ? "MaxPool" : "AveragePool", {in}, l.name);
        set_ints(n, "kernel_shape", {p.kh, p.kw});
        set_ints(n, "strides", {p.sh, p.sw});
        set_ints(n, "pads", {p.ph, p.pw, p.ph, p.pw});
        set_int(n, "ceil_mode", 0);
        if (l.kind == LayerKind::AvgPool) set_int(n, "count_include_pad", p.count_include_pad ? 1 : 0);
        break;
      }
      case LayerKind::GlobalAvgPool:
        need_image(l);
        add_node(l.name, "GlobalAveragePool", {in}, l.name);
        break;
      case LayerKind::Add:
        for (const auto& i : l.inputs)
          if (rank_.at(i) != rank)
            fail("layer '" + l.name + "' (add) adds '" + in + "' and '" + i + "', one flattened and one NCHW");
        // ONNX Add is binary; Sum takes any number of inputs.
        add_node(l.name, l.inputs.size() == 2 ? "Add" : "Sum", l.inputs, l.name);
        break;
      case LayerKind::Linear: {
        std::string x = in;
        if (rank == 4) {
          // A Cx1x1 NCHW tensor (e.g. straight from GlobalAvgPool): Gemm
          // needs [N, C], so flatten it first.
          x = l.name + "/flatten";
          claim(x, "the flatten before a linear layer");
          set_int(add_node(x, "Flatten", {in}, x), "axis", 1);
        }
        const std::int64_t out = l.linear.out_features, fan_in = shaped.in_shape.numel();
        std::vector<std::string> ins{x, add_initializer(l.name + ".weight", {out, fan_in}, l.weight)};
        if (l.linear.bias) ins.push_back(add_initializer(l.name + ".bias", {out}, l.bias));
        auto* n = add_node(l.name, "Gemm", ins, l.name);
        set_float(n, "alpha", 1.0f);
        set_float(n, "beta", 1.0f);
        set_int(n, "transB", 1);
        rank = 2;
        break;
      }
      case LayerKind::Flatten:
        set_int(add_node(l.name, "Flatten", {in}, l.name), "axis", 1);
        rank = 2;
        break;
    }
    rank_[l.name] = rank;
  }

  const Network& net_;
  const fs::path path_;
  onnx::ModelProto model_;
  onnx::GraphProto* g_ = nullptr;
  std::unordered_map<std::string, int> rank_;  // ONNX rank of each tensor: 4 (NCHW) or 2
  std::unordered_set<std::string> tensor_names_;
};

}  // namespace

Network load_onnx(const fs::path& path) {
  const std::string bytes = read_file(path);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw Error(quoted(path) + ": not a valid ONNX model (protobuf parse failed: truncated, or not an ONNX file)");
  return Importer(path, model).run();
}

void save_onnx(const Network& net, const fs::path& path) { Exporter(net, path).run(); }

}  // namespace mixtd::net
