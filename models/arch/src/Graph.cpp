#include "mixtd/arch/Graph.h"

#include <map>
#include <numeric>
#include <set>

#include "mixtd/arch/Resources.h"
#include "mixtd/support/Error.h"

namespace mixtd::arch {

std::string_view to_string(ModuleKind k) {
  switch (k) {
    case ModuleKind::HostIn:
      return "host_in";
    case ModuleKind::HostOut:
      return "host_out";
    case ModuleKind::Stage:
      return "stage";
    case ModuleKind::Split:
      return "split";
    case ModuleKind::Fork:
      return "fork";
    case ModuleKind::GroupAdd:
      return "group_add";
    case ModuleKind::Merge:
      return "merge";
    case ModuleKind::RoundRobin:
      return "round_robin";
    case ModuleKind::MaxPool:
      return "maxpool";
    case ModuleKind::AvgPool:
      return "avgpool";
    case ModuleKind::GlobalAvgPool:
      return "global_avgpool";
    case ModuleKind::EltwiseAdd:
      return "eltwise_add";
    case ModuleKind::ReLU:
      return "relu";
  }
  return "?";
}

int Graph::find(std::string_view n) const {
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (modules[i].name == n) return static_cast<int>(i);
  return -1;
}

namespace {

// Where a tensor is available: `groups` streams, each `width` words per beat
// and carrying shape.c / groups channels (strided), produced by `module`.
struct Port {
  int module = -1;
  std::int64_t groups = 1;
  std::int64_t width = 1;
  net::Shape shape;
};

std::int64_t largest_divisor_at_most(std::int64_t n, std::int64_t cap) {
  for (std::int64_t d = std::min(n, cap); d >= 1; --d)
    if (n % d == 0) return d;
  return 1;
}

class Builder {
 public:
  explicit Builder(const Design& d) : d_(d) {}

  Graph build() {
    const net::Network& net = d_.network;
    find_fused_relus();
    Port in = host_in();
    ports_[net.input_name] = in;
    for (const auto& l : net.layers) {
      if (fused_.count(l.name)) {
        ports_[l.name] = ports_.at(l.inputs[0]);
        continue;
      }
      switch (l.kind) {
        case net::LayerKind::Conv2d:
        case net::LayerKind::Linear:
          ports_[l.name] = conv_layer(l);
          break;
        case net::LayerKind::Add:
          ports_[l.name] = add_layer(l);
          break;
        case net::LayerKind::MaxPool:
        case net::LayerKind::AvgPool:
          ports_[l.name] = pool_layer(l);
          break;
        case net::LayerKind::GlobalAvgPool:
          ports_[l.name] = gap_layer(l);
          break;
        case net::LayerKind::ReLU:
          ports_[l.name] = relu_layer(l);
          break;
        case net::LayerKind::Flatten: {
          Port p = ports_.at(l.inputs[0]);
          p.shape = l.out_shape;
          ports_[l.name] = p;
          break;
        }
        case net::LayerKind::BatchNorm:
          throw Error("layer '" + l.name + "': BatchNorm must be folded into its conv before mapping");
      }
    }
    host_out(ports_.at(net.outputs().at(0)));
    size_skip_fifos();
    for (auto& s : g_.streams) {
      if (auto it = d_.fifo_depths.find(s.name); it != d_.fifo_depths.end()) s.depth = it->second;
      s.resources = stream_resources(g_, s, d_.bits);
    }
    return std::move(g_);
  }

 private:
  // ReLUs fused into their producer (the one rule, net::fused_relus).
  void find_fused_relus() {
    for (const auto& [producer, relu] : net::fused_relus(d_.network)) {
      fused_.insert(relu);
      relu_of_.insert(producer);
    }
  }

  int add_module(Module m) {
    g_.modules.push_back(std::move(m));
    return static_cast<int>(g_.modules.size()) - 1;
  }

  void connect(int from, int to, std::int64_t count, std::int64_t width, std::int64_t words) {
    Stream s;
    s.name = g_.modules[static_cast<std::size_t>(from)].name + "->" + g_.modules[static_cast<std::size_t>(to)].name;
    s.from = from;
    s.to = to;
    s.count = count;
    s.width = width;
    s.words = words;
    s.depth = d_.fifo_depth;
    g_.streams.push_back(s);
    const int id = static_cast<int>(g_.streams.size()) - 1;
    g_.modules[static_cast<std::size_t>(from)].outputs.push_back(id);
    g_.modules[static_cast<std::size_t>(to)].inputs.push_back(id);
  }

  Port host_in() {
    const net::Shape s = d_.network.input_shape;
    Module m;
    m.name = "host_in";
    m.kind = ModuleKind::HostIn;
    m.width_out = largest_divisor_at_most(s.c, static_cast<std::int64_t>(d_.device.host_words_per_cycle));
    m.words_out = s.numel();
    m.out_shape = s;
    m.cycles = stream_cycles(0, 1, s.numel(), m.width_out);
    m.resources = stream_module_resources(m, m.width_out, m.width_out, d_.bits, d_.fifo_depth);
    return {add_module(m), 1, m.width_out, s};
  }

  void host_out(Port p) {
    p = regroup(p, 1, "host_out");
    Module m;
    m.name = "host_out";
    m.kind = ModuleKind::HostOut;
    m.width_in = p.width;
    m.words_in = p.shape.numel();
    m.in_shape = p.shape;
    const auto bw = largest_divisor_at_most(p.width, static_cast<std::int64_t>(d_.device.host_words_per_cycle));
    m.cycles = stream_cycles(p.shape.numel(), bw, 0, 1);
    m.resources = stream_module_resources(m, p.width, p.width, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    connect(p.module, id, 1, p.width, p.shape.numel());
  }

  // Brings a tensor from p.groups streams to `to` streams (strided groups).
  Port regroup(const Port& p, std::int64_t to, const std::string& layer) {
    if (p.groups == to) return p;
    Module m;
    m.layer = layer;
    m.ports_in = p.groups;
    m.ports_out = to;
    m.width_in = p.width;
    m.words_in = p.shape.numel() / p.groups;
    m.words_out = p.shape.numel() / to;
    m.in_shape = {p.shape.c / p.groups, p.shape.h, p.shape.w};
    m.out_shape = {p.shape.c / to, p.shape.h, p.shape.w};
    const std::int64_t aggregate = p.width * p.groups;
    m.width_out = std::max<std::int64_t>(1, aggregate / to);
    if (m.out_shape.c % m.width_out != 0) m.width_out = std::gcd(m.width_out, m.out_shape.c);
    if (p.groups == 1) {
      m.kind = ModuleKind::Split;
      m.name = layer + "/split";
    } else if (to == 1) {
      m.kind = ModuleKind::Merge;
      m.name = layer + "/merge";
    } else {
      m.kind = ModuleKind::RoundRobin;
      m.name = layer + "/regroup";
      m.fifos = std::lcm(p.groups, to);
    }
    // All ports move in parallel: cycles are per-port words over per-port width.
    m.cycles = stream_cycles(m.words_in, m.width_in, m.words_out, m.width_out);
    m.resources = stream_module_resources(m, m.width_in, m.width_out, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    connect(p.module, id, p.groups, p.width, m.words_in);
    return {id, to, m.width_out, p.shape};
  }

  Port conv_layer(const net::Layer& l) {
    const LayerMapping& map = d_.mapping(l.name);
    const td::LayerGeometry geo = d_.geometry(l);
    const std::int64_t g1 = geo.tau.g1, g2 = geo.tau.g2;
    Port in = ports_.at(l.inputs[0]);
    if (l.kind == net::LayerKind::Linear) in.shape = {in.shape.numel(), 1, 1};
    in = regroup(in, g2, l.name);
    int prev = in.module;
    std::int64_t prev_width = in.width;
    std::int64_t prev_words = in.shape.numel() / g2;
    if (g1 > 1) {
      Module f;
      f.name = l.name + "/fork";
      f.kind = ModuleKind::Fork;
      f.layer = l.name;
      f.count = g2;
      f.ports_out = g1;
      f.width_in = f.width_out = prev_width;
      f.words_in = f.words_out = prev_words;
      f.in_shape = f.out_shape = geo.stages[0].in;
      f.cycles = stream_cycles(prev_words, prev_width, prev_words, prev_width);
      f.resources = stream_module_resources(f, prev_width, prev_width, d_.bits, d_.fifo_depth);
      const int id = add_module(f);
      connect(prev, id, g2, prev_width, prev_words);
      prev = id;
    }
    const bool relu = relu_of_.count(l.name) > 0;
    const bool device_has_uram = d_.device.capacity.uram > 0;
    for (std::size_t k = 0; k < geo.stages.size(); ++k) {
      const auto& s = geo.stages[k];
      Module m;
      m.name = l.name + "/stage" + std::to_string(k);
      m.kind = ModuleKind::Stage;
      m.layer = l.name;
      m.count = g1 * g2;
      m.stage_index = static_cast<int>(k);
      m.shape = s;
      m.psi = map.stages[k];
      m.width_in = m.psi.p_in;
      m.width_out = s.depthwise ? m.psi.p_in : m.psi.p_out;
      m.words_in = s.in.numel();
      m.words_out = s.out.numel();
      m.in_shape = s.in;
      m.out_shape = s.out;
      m.relu = relu && g2 == 1 && k + 1 == geo.stages.size();
      m.cycles = stage_cycles(s, m.psi);
      m.resources = stage_resources(s, m.psi, d_.bits, device_has_uram).total;
      const int id = add_module(m);
      connect(prev, id, g1 * g2, prev_width, prev_words);
      prev = id;
      prev_width = m.width_out;
      prev_words = m.words_out;
    }
    if (g2 > 1) {
      Module a;
      a.name = l.name + "/group_add";
      a.kind = ModuleKind::GroupAdd;
      a.layer = l.name;
      a.count = g1;
      a.ports_in = g2;
      a.width_in = a.width_out = prev_width;
      a.words_in = a.words_out = prev_words;
      a.in_shape = a.out_shape = geo.stages.back().out;
      a.relu = relu;
      a.cycles = stream_cycles(prev_words, prev_width, prev_words, prev_width);
      add_requantiser(a.cycles);
      a.resources = stream_module_resources(a, prev_width, prev_width, d_.bits, d_.fifo_depth);
      const int id = add_module(a);
      connect(prev, id, g1 * g2, prev_width, prev_words);
      prev = id;
    }
    return {prev, g1, prev_width, l.out_shape};
  }

  Port add_layer(const net::Layer& l) {
    Module m;
    m.name = l.name;
    m.kind = ModuleKind::EltwiseAdd;
    m.layer = l.name;
    m.ports_in = static_cast<std::int64_t>(l.inputs.size());
    m.words_in = m.words_out = l.out_shape.numel();
    m.in_shape = m.out_shape = l.out_shape;
    m.relu = relu_of_.count(l.name) > 0;
    std::vector<Port> ins;
    for (const auto& i : l.inputs) ins.push_back(regroup(ports_.at(i), 1, l.name + "/" + i));
    std::int64_t in_cycles = 0;
    for (const auto& p : ins) {
      m.width_in = std::max(m.width_in, p.width);
      in_cycles = std::max(in_cycles, ceil_div(m.words_in, p.width));
    }
    m.width_out = m.width_in;
    m.cycles = stream_cycles(m.words_in, m.width_in, m.words_out, m.width_out);
    m.cycles.in = in_cycles;
    add_requantiser(m.cycles);
    m.resources = stream_module_resources(m, m.width_in, m.width_out, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    for (const auto& p : ins) connect(p.module, id, 1, p.width, m.words_in);
    return {id, 1, m.width_out, l.out_shape};
  }

  Port pool_layer(const net::Layer& l) {
    const Port in = regroup(ports_.at(l.inputs[0]), 1, l.name);
    Module m;
    m.name = l.name;
    m.kind = l.kind == net::LayerKind::MaxPool ? ModuleKind::MaxPool : ModuleKind::AvgPool;
    m.layer = l.name;
    m.pool = l.pool;
    m.width_in = m.width_out = in.width;
    m.words_in = l.in_shape.numel();
    m.words_out = l.out_shape.numel();
    m.in_shape = l.in_shape;
    m.out_shape = l.out_shape;
    m.cycles = pool_cycles(l.in_shape, l.out_shape, l.pool.kh, l.pool.kw, l.pool.ph, l.pool.pw, in.width);
    m.resources = stream_module_resources(m, in.width, in.width, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    connect(in.module, id, 1, in.width, m.words_in);
    return {id, 1, in.width, l.out_shape};
  }

  Port gap_layer(const net::Layer& l) {
    const Port in = regroup(ports_.at(l.inputs[0]), 1, l.name);
    Module m;
    m.name = l.name;
    m.kind = ModuleKind::GlobalAvgPool;
    m.layer = l.name;
    m.width_in = m.width_out = in.width;
    m.words_in = l.in_shape.numel();
    m.words_out = l.out_shape.numel();
    m.in_shape = l.in_shape;
    m.out_shape = l.out_shape;
    m.cycles = global_pool_cycles(l.in_shape, in.width);
    m.resources = stream_module_resources(m, in.width, in.width, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    connect(in.module, id, 1, in.width, m.words_in);
    return {id, 1, in.width, l.out_shape};
  }

  Port relu_layer(const net::Layer& l) {
    const Port in = regroup(ports_.at(l.inputs[0]), 1, l.name);
    Module m;
    m.name = l.name;
    m.kind = ModuleKind::ReLU;
    m.layer = l.name;
    m.width_in = m.width_out = in.width;
    m.words_in = m.words_out = l.in_shape.numel();
    m.in_shape = m.out_shape = l.in_shape;
    m.cycles = stream_cycles(m.words_in, in.width, m.words_out, in.width);
    m.resources = stream_module_resources(m, in.width, in.width, d_.bits, d_.fifo_depth);
    const int id = add_module(m);
    connect(in.module, id, 1, in.width, m.words_in);
    return {id, 1, in.width, l.out_shape};
  }

  // The input of an Add that arrives earlier is the residual (skip) path;
  // its FIFO is sized by Timing.h's skip_fifo_depth.
  std::int64_t producer_pixels(const Stream& st) const {
    const auto& s = g_.modules[static_cast<std::size_t>(st.from)].out_shape;
    return std::max<std::int64_t>(1, s.h * s.w);
  }

  void size_skip_fifos() {
    const auto arr = arrivals(g_);
    for (auto& m : g_.modules) {
      if (m.kind != ModuleKind::EltwiseAdd || m.inputs.size() < 2) continue;
      Arrival main;
      for (int s : m.inputs) {
        const Arrival& a = arr[static_cast<std::size_t>(g_.streams[static_cast<std::size_t>(s)].from)];
        if (a.first > main.first) main = a;
      }
      for (int s : m.inputs) {
        Stream& st = g_.streams[static_cast<std::size_t>(s)];
        const Arrival& p = arr[static_cast<std::size_t>(st.from)];
        const std::int64_t depth = skip_fifo_depth(p, main, st.words, st.width, producer_pixels(st), d_.fifo_depth,
                                                   g_.modules[static_cast<std::size_t>(st.from)].out_shape.w);
        if (depth == 0) continue;
        st.skip = true;
        st.depth = depth;
      }
    }
  }

  const Design& d_;
  Graph g_;
  std::map<std::string, Port> ports_;
  std::set<std::string> fused_, relu_of_;
};

}  // namespace

std::int64_t consumer_read_width(const Module& consumer) {
  return consumer.kind == ModuleKind::HostOut ? 0 : consumer.width_in;
}

bool reads_another_width(std::int64_t stream_width, std::int64_t read_width) {
  return read_width != 0 && read_width != stream_width;
}

bool consumer_repacks(const Module& consumer, std::int64_t stream_width) {
  return reads_another_width(stream_width, consumer_read_width(consumer));
}

Resources physical_stream_resources(std::int64_t depth, std::int64_t width, std::int64_t read_width,
                                    const net::Bits& bits) {
  Resources r = fifo_resources(depth, width, bits);
  if (reads_another_width(width, read_width)) r += repack_resources(width, read_width);
  return r;
}

Resources stream_resources(const Graph& g, const Stream& s, const net::Bits& bits) {
  return physical_stream_resources(s.depth, s.width, consumer_read_width(g.modules[static_cast<std::size_t>(s.to)]),
                                   bits)
      .scaled(static_cast<double>(s.count));
}

ModuleLogic stream_module_logic(const Module& m, std::int64_t width_in, std::int64_t width_out) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double in_lanes = d(width_in * m.ports_in), out_lanes = d(width_out * m.ports_out);
  switch (m.kind) {
    case ModuleKind::Stage:
      break;
    case ModuleKind::HostIn:
      return {LogicBlock::Host, {1.0, d(width_out), 0, 0}};
    case ModuleKind::HostOut:
      return {LogicBlock::Host, {1.0, d(width_in), 0, 0}};
    case ModuleKind::Split:
    case ModuleKind::Merge:
    case ModuleKind::RoundRobin:
    case ModuleKind::Fork:
    case ModuleKind::ReLU: {
      const LogicBlock b = m.kind == ModuleKind::Split   ? LogicBlock::Split
                           : m.kind == ModuleKind::Merge ? LogicBlock::Merge
                           : m.kind == ModuleKind::Fork  ? LogicBlock::Fork
                           : m.kind == ModuleKind::ReLU  ? LogicBlock::ReLU
                                                         : LogicBlock::Regroup;
      // Two pixels of every input port in registers, each output lane a mux
      // over them (mixtd_stream_route). in_shape is one port's tensor.
      const double channels = d(m.in_shape.c * m.ports_in);
      const double lanes = d(std::max(width_in, width_out) * (m.ports_in + m.ports_out));
      return {b, {1.0, lanes, channels, out_lanes * channels}};
    }
    // The last feature is the words of a pixel of all inputs: the two-pixel
    // buffer of every input (mixtd_stream_route) is most of their FFs.
    case ModuleKind::GroupAdd:
      return {LogicBlock::GroupAdd, {1.0, in_lanes, out_lanes, d(m.in_shape.c * m.ports_in)}};
    case ModuleKind::EltwiseAdd:
      return {LogicBlock::EltwiseAdd, {1.0, in_lanes, out_lanes, d(m.in_shape.c * m.ports_in)}};
    case ModuleKind::MaxPool:
    case ModuleKind::AvgPool:
      return {LogicBlock::Pool, pool_logic_features(m.pool.kh, m.pool.kw, width_in)};
    case ModuleKind::GlobalAvgPool:
      return {LogicBlock::GlobalAvgPool, {1.0, d(width_in), d(m.in_shape.c), 0}};
  }
  throw Error("internal: the stream-module logic of a stage ('" + m.name + "'); stages use stage_resources");
}

Resources stream_module_resources(const Module& m, std::int64_t width_in, std::int64_t width_out, const net::Bits& bits,
                                  std::int64_t fifo_depth) {
  const ModuleLogic l = stream_module_logic(m, width_in, width_out);
  Resources r = logic_resources(l.block, l.features);
  if (m.kind == ModuleKind::RoundRobin)  // the lcm FIFOs of the array
    r += fifo_resources(fifo_depth, 1, bits).scaled(static_cast<double>(m.fifos));
  if (m.kind == ModuleKind::MaxPool || m.kind == ModuleKind::AvgPool) {
    r += pool_line_buffers(m.in_shape, m.pool, width_in, bits);
    r.dsp += static_cast<double>(pool_dsps(m.kind == ModuleKind::AvgPool, width_in));
  }
  if (m.kind == ModuleKind::GlobalAvgPool)
    r.dsp += static_cast<double>(global_avg_pool_dsps(width_in, m.in_shape.h * m.in_shape.w));
  return r;
}

Graph build_graph(const Design& d) { return Builder(d).build(); }

std::vector<Arrival> arrivals(const Graph& g) {
  std::vector<Arrival> a(g.modules.size());
  std::vector<Arrival> ins;
  for (std::size_t i = 0; i < g.modules.size(); ++i) {
    ins.clear();
    for (int s : g.modules[i].inputs)
      ins.push_back(a[static_cast<std::size_t>(g.streams[static_cast<std::size_t>(s)].from)]);
    a[i] = arrival(g.modules[i].cycles, ins.data(), ins.size());
  }
  return a;
}

}  // namespace mixtd::arch
