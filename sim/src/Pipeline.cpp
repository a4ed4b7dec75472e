#include "Pipeline.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "mixtd/arch/Timing.h"
#include "mixtd/sim/Functional.h"
#include "mixtd/support/Error.h"

namespace mixtd::sim {

namespace {

// The layer's QLayer, by name.
const numerics::QLayer& qlayer(const numerics::QNetwork& q, const std::string& name) {
  for (const auto& l : q.layers)
    if (l.name == name) return l;
  throw Error("simulate: the quantised network has no layer '" + name + "'");
}

std::string instance_name(const arch::Module& m, std::int64_t i) {
  // SystemC names allow letters, digits and '_' ('.' is its hierarchy).
  std::string n = m.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (m.count > 1) {
    n += '_';
    n += std::to_string(i);
  }
  return n;
}

}  // namespace

Pipeline::Pipeline(const arch::Design& d, const arch::Graph& g, const numerics::QNetwork* q, std::int64_t frames,
                   const sc::HostStalls& stalls, sc::SimContext& ctx)
    : d_(d), g_(g), ctx_(ctx) {
  build_blocks(q, frames, stalls);
  build_streams();
}

// Deliberately not destroyed: SystemC 2.3 does not support deleting modules
// once the simulation has run, and the process ends soon after.
Pipeline::~Pipeline() {
  for (auto& m : owned_) static_cast<void>(m.release());
}

void Pipeline::build_blocks(const numerics::QNetwork* q, std::int64_t frames, const sc::HostStalls& stalls) {
  const std::int64_t in_words = d_.network.input_shape.numel();
  std::int64_t out_words = 0;
  for (const auto& m : g_.modules)
    if (m.kind == arch::ModuleKind::HostOut) out_words = m.in_shape.numel();
  input_base = 0;
  result_base = in_words * frames;
  auto* mem = new sc::HostMemory("ddr", (in_words + out_words) * frames, d_.device.host_words_per_cycle, 0, ctx_);
  owned_.emplace_back(mem);
  memory = mem;
  loader = new sc::WeightLoader("weight_loader", ctx_);
  owned_.emplace_back(loader);

  blocks.resize(g_.modules.size());
  for (std::size_t k = 0; k < g_.modules.size(); ++k) {
    const arch::Module& m = g_.modules[k];
    auto& insts = blocks[k];
    insts.resize(static_cast<std::size_t>(m.count));
    for (std::int64_t i = 0; i < m.count; ++i) {
      BlockInstance& b = insts[static_cast<std::size_t>(i)];
      const std::string name = instance_name(m, i);
      switch (m.kind) {
        case arch::ModuleKind::HostIn: {
          b.host_in = host_in =
              new sc::HostIn(name.c_str(), m.out_shape.numel(), m.width_out, frames, stalls, loader, ctx_);
          host_in->socket.bind(memory->socket);
          b.stats = &host_in->stats;
          owned_.emplace_back(host_in);
          break;
        }
        case arch::ModuleKind::HostOut: {
          const std::int64_t bus = m.in_shape.numel() / std::max<std::int64_t>(1, m.cycles.in);
          b.host_out = host_out =
              new sc::HostOut(name.c_str(), m.in_shape.numel(), bus, frames, result_base, stalls, ctx_);
          host_out->socket.bind(memory->socket);
          b.stats = &host_out->stats;
          owned_.emplace_back(host_out);
          break;
        }
        case arch::ModuleKind::Stage: {
          const td::StageShape& s = m.shape;
          sc::WindowShape ws{s.in_ch, s.in.h, s.in.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw};
          sc::StageParams p;
          p.in_ch = s.in_ch;
          p.out_ch = s.out_ch;
          p.groups = s.groups;
          p.depthwise = s.depthwise;
          p.p_in = m.psi.p_in;
          p.p_out = s.depthwise ? m.psi.p_in : m.psi.p_out;
          p.fine = m.psi.fine;
          const numerics::QStage* qs = nullptr;
          if (q) {
            const auto& ql = qlayer(*q, m.layer);
            qs = &ql.chunks.at(static_cast<std::size_t>(i)).at(static_cast<std::size_t>(m.stage_index));
            p.requant.channels = qs->requant;
          }
          b.stage = new sc::Stage(name.c_str(), ws, std::move(p), frames, ctx_);
          loader->socket.bind(b.stage->weights_socket);
          loader->sizes.push_back(b.stage->weight_bytes());
          if (qs) loader->images.push_back(stage_image(d_, m, *qs));
          b.stats = &b.stage->compute().stats;
          owned_.emplace_back(b.stage);
          break;
        }
        case arch::ModuleKind::MaxPool:
        case arch::ModuleKind::AvgPool: {
          const auto& pa = m.pool;
          sc::WindowShape ws{m.in_shape.c, m.in_shape.h, m.in_shape.w, pa.kh, pa.kw, pa.sh, pa.sw, pa.ph, pa.pw};
          sc::PoolParams pp{m.kind == arch::ModuleKind::MaxPool, pa.count_include_pad, m.width_in};
          b.pool = new sc::Pool(name.c_str(), ws, pp, frames, ctx_);
          b.stats = &b.pool->compute().stats;
          owned_.emplace_back(b.pool);
          break;
        }
        case arch::ModuleKind::GlobalAvgPool: {
          b.gap =
              new sc::GlobalAvgPool(name.c_str(), m.in_shape.c, m.in_shape.h * m.in_shape.w, m.width_in, frames, ctx_);
          b.stats = &b.gap->stats;
          owned_.emplace_back(b.gap);
          break;
        }
        default: {
          sc::StreamBlockParams p;
          p.pixels = m.in_shape.h * m.in_shape.w;
          p.ports_in = m.ports_in;
          p.ports_out = m.ports_out;
          p.width_in = m.width_in;
          p.width_out = m.width_out;
          p.latency = arch::kStreamLatency;
          p.channels = m.in_shape.c;
          switch (m.kind) {
            case arch::ModuleKind::Split:
            case arch::ModuleKind::Merge:
            case arch::ModuleKind::RoundRobin:
              p.routing = m.kind == arch::ModuleKind::Split   ? sc::Routing::Split
                          : m.kind == arch::ModuleKind::Merge ? sc::Routing::Merge
                                                              : sc::Routing::Regroup;
              p.groups_in = m.ports_in;
              p.groups_out = m.ports_out;
              p.channels = m.in_shape.c * m.ports_in;
              break;
            case arch::ModuleKind::Fork:
              p.routing = sc::Routing::Fork;
              break;
            case arch::ModuleKind::ReLU:
              p.routing = sc::Routing::Relu;
              break;
            case arch::ModuleKind::GroupAdd: {
              p.routing = sc::Routing::GroupAdd;
              p.latency += arch::kRequantPipeline;
              if (q) {
                const auto& ql = qlayer(*q, m.layer);
                const std::int64_t g1 = ql.tau.g1;
                for (std::int64_t j = 0; j < m.out_shape.c; ++j)
                  p.requant.push_back(ql.group_add.at(static_cast<std::size_t>(i + j * g1)));
              }
              break;
            }
            case arch::ModuleKind::EltwiseAdd: {
              p.routing = sc::Routing::EltwiseAdd;
              p.latency += arch::kRequantPipeline;
              if (q) {
                const auto& ql = qlayer(*q, m.layer);
                p.in_exps = ql.in_exps;
                p.add_requant = ql.add_requant;
              } else {
                p.in_exps.assign(static_cast<std::size_t>(m.ports_in), 0);
              }
              break;
            }
            default:
              throw Error("simulate: no SystemC block for module '" + m.name + "'");
          }
          b.block = new sc::StreamBlock(name.c_str(), std::move(p), frames, ctx_);
          b.stats = &b.block->stats;
          owned_.emplace_back(b.block);
        }
      }
    }
  }
}

void Pipeline::build_streams() {
  // Output ports: (module, instance, port) → FIFOs (a fan-out has several).
  std::map<std::tuple<int, std::int64_t, std::int64_t>, std::vector<sc::BeatFifo*>> outs;
  std::vector<std::int64_t> in_base(g_.modules.size(), 0);
  fifos.resize(g_.streams.size());
  for (std::size_t si = 0; si < g_.streams.size(); ++si) {
    const arch::Stream& s = g_.streams[si];
    const arch::Module& from = g_.modules[static_cast<std::size_t>(s.from)];
    const arch::Module& to = g_.modules[static_cast<std::size_t>(s.to)];
    const std::int64_t k = s.count / to.count;
    for (std::int64_t e = 0; e < s.count; ++e) {
      const std::string name = s.count > 1 ? s.name + "[" + std::to_string(e) + "]" : s.name;
      auto f = std::make_unique<sc::BeatFifo>(name, s.depth, s.width, ctx_);
      const std::int64_t pi = e % from.count, pport = e / from.count;
      const std::int64_t ci = e / k, cport = in_base[static_cast<std::size_t>(s.to)] + e % k;
      f->producer = instance_name(from, pi);
      f->consumer = instance_name(to, ci);
      outs[{s.from, pi, pport}].push_back(f.get());
      BlockInstance& c = blocks[static_cast<std::size_t>(s.to)][static_cast<std::size_t>(ci)];
      if (c.stage)
        c.stage->line_buffer().bind_input(f.get());
      else if (c.pool)
        c.pool->line_buffer().bind_input(f.get());
      else if (c.block)
        c.block->bind_input(cport, f.get());
      else if (c.gap)
        c.gap->bind_input(f.get());
      else if (c.host_out)
        c.host_out->bind_input(f.get());
      else
        throw Error("simulate: module '" + to.name + "' takes no input");
      fifos[si].push_back(std::move(f));
    }
    in_base[static_cast<std::size_t>(s.to)] += k;
  }
  for (auto& [key, list] : outs) {
    const auto [mi, inst, port] = key;
    BlockInstance& b = blocks[static_cast<std::size_t>(mi)][static_cast<std::size_t>(inst)];
    if (b.stage)
      b.stage->compute().bind_output(list);
    else if (b.pool)
      b.pool->compute().bind_output(list);
    else if (b.block)
      b.block->bind_output(port, list);
    else if (b.gap)
      b.gap->bind_output(list);
    else if (b.host_in)
      b.host_in->bind_output(list);
  }
  // Every port must be connected, or its thread would wait for ever.
  for (std::size_t k = 0; k < g_.modules.size(); ++k)
    for (const BlockInstance& b : blocks[k]) {
      bool ok = true;
      if (b.block) {
        for (const auto& p : b.block->inputs()) ok = ok && p.fifo();
        for (const auto& p : b.block->outputs()) ok = ok && !p.fifos().empty();
      }
      if (b.stage) ok = b.stage->line_buffer().input() && !b.stage->compute().output().fifos().empty();
      require(ok, "simulate: module '" + g_.modules[k].name + "' has an unconnected port (graph bug)");
    }
}

std::vector<std::string> Pipeline::blocked() const {
  std::vector<std::string> out;
  for (std::size_t si = 0; si < fifos.size(); ++si)
    for (const auto& f : fifos[si]) {
      const std::string what = g_.streams[si].skip ? "skip FIFO '" : "FIFO '";
      if (f->writer_waiting())
        out.push_back(what + f->name() + "' is full (" + std::to_string(f->size()) + "/" + std::to_string(f->depth()) +
                      " beats): '" + f->producer + "' waits to write");
      if (f->reader_waiting()) out.push_back(what + f->name() + "' is empty: '" + f->consumer + "' waits to read");
    }
  for (std::size_t k = 0; k < blocks.size(); ++k)
    for (const BlockInstance& b : blocks[k]) {
      const sc::LineBuffer* lb = b.stage ? &b.stage->line_buffer() : b.pool ? &b.pool->line_buffer() : nullptr;
      if (lb && lb->waiting_for_space())
        out.push_back("line buffer of '" + std::string(lb->name()) + "' is full (" +
                      std::to_string(lb->capacity_pixels()) + " pixels): its compute has not released a window");
    }
  return out;
}

}  // namespace mixtd::sim
