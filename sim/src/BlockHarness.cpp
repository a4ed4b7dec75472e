#include "mixtd/sim/BlockHarness.h"

#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <systemc>

#include "mixtd/arch/Timing.h"
#include "mixtd/sc/Stage.h"
#include "mixtd/sc/StreamBlocks.h"
#include "mixtd/sim/WorkerPool.h"
#include "mixtd/support/Error.h"

namespace mixtd::sim {

namespace {

using sc::Cycle;

// Preloads the stage's weights over TLM-2.0 (as sc::WeightLoader does),
// then offers the input beats on schedule. The preload's annotated delay is
// not waited for: cycle 0 is the first input beat, as in the RTL bench
// whose memories are initialised from images.
class ScheduleSource : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ScheduleSource);
  ScheduleSource(sc_core::sc_module_name name, const WindowBlockSpec& s, bool with_weights, sc::SimContext& ctx)
      : sc_module(name), s_(s), ctx_(ctx) {
    if (with_weights) weights = std::make_unique<tlm_utils::simple_initiator_socket<ScheduleSource>>("weights");
    SC_THREAD(run);
  }
  void bind_output(sc::BeatFifo* f) { out_ = sc::OutPort({f}, s_.p_in, nullptr, &ctx_); }
  std::unique_ptr<tlm_utils::simple_initiator_socket<ScheduleSource>> weights;  // stages only

 private:
  void run() {
    if (weights) {
      tlm::tlm_generic_payload t;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      std::vector<std::int8_t> image = s_.weight;
      t.set_command(tlm::TLM_WRITE_COMMAND);
      t.set_address(0);
      t.set_data_ptr(reinterpret_cast<unsigned char*>(image.data()));
      t.set_data_length(static_cast<unsigned int>(image.size()));
      t.set_streaming_width(static_cast<unsigned int>(image.size()));
      (*weights)->b_transport(t, delay);
      require(t.get_response_status() == tlm::TLM_OK_RESPONSE, "run_window_block: weight preload refused");
    }
    const auto beats = static_cast<std::int64_t>(s_.input.size()) / s_.p_in;
    for (std::int64_t k = 0; k < beats; ++k) {
      const Cycle at = k < static_cast<std::int64_t>(s_.offer.size()) ? s_.offer[static_cast<std::size_t>(k)] : 0;
      out_.write(at, &s_.input[static_cast<std::size_t>(k * s_.p_in)]);
    }
  }
  const WindowBlockSpec& s_;
  sc::SimContext& ctx_;
  sc::OutPort out_;
};

class ScheduleSink : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ScheduleSink);
  ScheduleSink(sc_core::sc_module_name name, const WindowBlockSpec& s, std::int64_t beats, std::int64_t width,
               BlockRun& run)
      : sc_module(name), s_(s), beats_(beats), width_(width), run_(run) {
    SC_THREAD(run_thread);
  }
  void bind_input(sc::BeatFifo* f) { in_ = sc::InPort(f, width_, nullptr); }

 private:
  void run_thread() {
    std::vector<std::int8_t> words(static_cast<std::size_t>(width_));
    for (std::int64_t k = 0; k < beats_; ++k) {
      const Cycle at = k < static_cast<std::int64_t>(s_.take.size()) ? s_.take[static_cast<std::size_t>(k)] : 0;
      run_.out_cycles.push_back(in_.read(at, words.data()));
      run_.output.insert(run_.output.end(), words.begin(), words.end());
    }
  }
  const WindowBlockSpec& s_;
  std::int64_t beats_, width_;
  BlockRun& run_;
  sc::InPort in_;
};

// The parent side of the pipe: words and cycles as text lines.
std::string encode(const BlockRun& r) {
  std::string out = std::to_string(r.out_width);
  out += '\n';
  for (std::size_t k = 0; k < r.out_cycles.size(); ++k) {
    out += std::to_string(r.out_cycles[k]);
    for (std::int64_t l = 0; l < r.out_width; ++l) {
      out += ' ';
      out += std::to_string(r.output[k * static_cast<std::size_t>(r.out_width) + static_cast<std::size_t>(l)]);
    }
    out += '\n';
  }
  return out;
}

BlockRun decode(const std::string& s) {
  BlockRun r;
  std::size_t pos = 0;
  auto next = [&]() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n')) ++pos;
    std::size_t used = 0;
    const long long v = std::stoll(s.substr(pos, 24), &used);
    pos += used;
    return static_cast<std::int64_t>(v);
  };
  r.out_width = next();
  while (true) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n')) ++pos;
    if (pos >= s.size()) break;
    r.out_cycles.push_back(next());
    for (std::int64_t l = 0; l < r.out_width; ++l) r.output.push_back(static_cast<std::int8_t>(next()));
  }
  return r;
}

sc::WindowShape shape_of(const WindowBlockSpec& s) {
  sc::WindowShape w;
  w.c = s.c;
  w.h = s.h;
  w.w = s.w;
  w.kh = s.kh;
  w.kw = s.kw;
  w.sh = s.sh;
  w.sw = s.sw;
  w.ph = s.ph;
  w.pw = s.pw;
  return w;
}

std::string run_child(const WindowBlockSpec& s) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  sc::SimContext ctx;
  ctx.data = true;
  const sc::WindowShape shape = shape_of(s);
  const bool pool = s.kind == WindowBlockSpec::Kind::MaxPool || s.kind == WindowBlockSpec::Kind::AvgPool;
  const std::int64_t out_width = pool || s.kind == WindowBlockSpec::Kind::Depthwise ? s.p_in : s.p_out;
  const std::int64_t out_ch = pool || s.kind == WindowBlockSpec::Kind::Depthwise ? s.c : s.out_ch;
  const std::int64_t beats_out = s.frames * shape.windows() * out_ch / out_width;
  BlockRun run;
  run.out_width = out_width;
  sc::BeatFifo in_fifo("in", s.fifo_depth, s.p_in, ctx), out_fifo("out", s.fifo_depth, out_width, ctx);
  ScheduleSource source("source", s, !pool, ctx);
  ScheduleSink sink("sink", s, beats_out, out_width, run);
  source.bind_output(&in_fifo);
  sink.bind_input(&out_fifo);
  std::unique_ptr<sc::Stage> stage;
  std::unique_ptr<sc::Pool> pooling;
  if (pool) {
    sc::PoolParams pp;
    pp.max = s.kind == WindowBlockSpec::Kind::MaxPool;
    pp.count_include_pad = s.count_include_pad;
    pp.p = s.p_in;
    pooling = std::make_unique<sc::Pool>("block", shape, pp, s.frames, ctx);
    pooling->line_buffer().bind_input(&in_fifo);
    pooling->compute().bind_output({&out_fifo});
  } else {
    sc::StageParams sp;
    sp.in_ch = s.c;
    sp.out_ch = out_ch;
    sp.depthwise = s.kind == WindowBlockSpec::Kind::Depthwise;
    sp.groups = sp.depthwise ? s.c : s.groups;
    sp.p_in = s.p_in;
    sp.p_out = s.p_out;
    sp.fine = s.fine;
    sp.requant.channels = s.requant;
    stage = std::make_unique<sc::Stage>("block", shape, sp, s.frames, ctx);
    require(static_cast<std::int64_t>(s.weight.size()) == stage->weight_bytes(),
            "run_window_block: " + std::to_string(s.weight.size()) + " weights given, the stage holds " +
                std::to_string(stage->weight_bytes()));
    source.weights->bind(stage->weights_socket);
    stage->line_buffer().bind_input(&in_fifo);
    stage->compute().bind_output({&out_fifo});
  }
  sc_core::sc_start();
  require(static_cast<std::int64_t>(run.out_cycles.size()) == beats_out,
          "run_window_block: the SystemC block stopped after " + std::to_string(run.out_cycles.size()) + " of " +
              std::to_string(beats_out) + " output beats");
  return encode(run);
}

// ---- streaming blocks -----------------------------------------------------------

std::int64_t at_or_zero(const std::vector<std::vector<std::int64_t>>& s, std::size_t port, std::int64_t k) {
  if (port >= s.size() || k >= static_cast<std::int64_t>(s[port].size())) return 0;
  return s[port][static_cast<std::size_t>(k)];
}

class PortSource : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PortSource);
  PortSource(sc_core::sc_module_name name, const StreamBlockSpec& s, std::size_t port, std::int64_t width,
             sc::BeatFifo* fifo, std::vector<std::int64_t>& cycles, sc::SimContext& ctx)
      : sc_module(name), s_(s), port_(port), width_(width), cycles_(cycles), out_({fifo}, width, nullptr, &ctx) {
    SC_THREAD(run);
  }

 private:
  void run() {
    const auto& words = s_.input[port_];
    const auto beats = static_cast<std::int64_t>(words.size()) / width_;
    for (std::int64_t k = 0; k < beats; ++k)
      cycles_.push_back(out_.write(at_or_zero(s_.offer, port_, k), &words[static_cast<std::size_t>(k * width_)]));
  }
  const StreamBlockSpec& s_;
  std::size_t port_;
  std::int64_t width_;
  std::vector<std::int64_t>& cycles_;
  sc::OutPort out_;
};

class PortSink : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PortSink);
  PortSink(sc_core::sc_module_name name, const StreamBlockSpec& s, std::size_t port, std::int64_t width,
           std::int64_t beats, sc::BeatFifo* fifo, std::vector<std::int64_t>& cycles, std::vector<std::int8_t>& words)
      : sc_module(name),
        s_(s),
        port_(port),
        width_(width),
        beats_(beats),
        cycles_(cycles),
        words_(words),
        in_(fifo, width, nullptr) {
    SC_THREAD(run);
  }

 private:
  void run() {
    std::vector<std::int8_t> beat(static_cast<std::size_t>(width_));
    for (std::int64_t k = 0; k < beats_; ++k) {
      cycles_.push_back(in_.read(at_or_zero(s_.take, port_, k), beat.data()));
      words_.insert(words_.end(), beat.begin(), beat.end());
    }
  }
  const StreamBlockSpec& s_;
  std::size_t port_;
  std::int64_t width_, beats_;
  std::vector<std::int64_t>& cycles_;
  std::vector<std::int8_t>& words_;
  sc::InPort in_;
};

// Numbers separated by blanks: ports in, then per port its beat count and
// cycles; ports out, then per port its beat count, width, cycles and words.
std::string encode(const StreamBlockRun& r) {
  std::string out;
  auto put = [&](std::int64_t v) {
    out += std::to_string(v);
    out += ' ';
  };
  put(static_cast<std::int64_t>(r.in_cycles.size()));
  for (const auto& c : r.in_cycles) {
    put(static_cast<std::int64_t>(c.size()));
    for (auto t : c) put(t);
    out += '\n';
  }
  put(static_cast<std::int64_t>(r.out_cycles.size()));
  for (std::size_t k = 0; k < r.out_cycles.size(); ++k) {
    put(static_cast<std::int64_t>(r.out_cycles[k].size()));
    put(static_cast<std::int64_t>(r.output[k].size()));
    for (auto t : r.out_cycles[k]) put(t);
    for (auto w : r.output[k]) put(w);
    out += '\n';
  }
  return out;
}

StreamBlockRun decode_stream(const std::string& s) {
  std::istringstream in(s);
  auto next = [&]() {
    long long v = 0;
    require(static_cast<bool>(in >> v), "run_stream_block: truncated answer from the SystemC child");
    return static_cast<std::int64_t>(v);
  };
  StreamBlockRun r;
  r.in_cycles.resize(static_cast<std::size_t>(next()));
  for (auto& c : r.in_cycles) {
    c.resize(static_cast<std::size_t>(next()));
    for (auto& t : c) t = next();
  }
  const auto ports_out = static_cast<std::size_t>(next());
  r.out_cycles.resize(ports_out);
  r.output.resize(ports_out);
  for (std::size_t k = 0; k < ports_out; ++k) {
    r.out_cycles[k].resize(static_cast<std::size_t>(next()));
    r.output[k].resize(static_cast<std::size_t>(next()));
    for (auto& t : r.out_cycles[k]) t = next();
    for (auto& w : r.output[k]) w = static_cast<std::int8_t>(next());
  }
  return r;
}

std::string run_stream_child(const StreamBlockSpec& s) {
  using K = StreamBlockSpec::Kind;
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  sc::SimContext ctx;
  ctx.data = true;
  const bool gap = s.kind == K::GlobalAvgPool;
  require(!gap || (s.ports_in == 1 && s.ports_out == 1 && s.width_in == s.width_out && s.groups_in == 1 &&
                   s.groups_out == 1),
          "run_stream_block: a global average pool has one port each side, of one width");
  require(static_cast<std::int64_t>(s.input.size()) == s.ports_in,
          "run_stream_block: " + std::to_string(s.input.size()) + " input streams for " + std::to_string(s.ports_in) +
              " ports");
  const std::int64_t fw = s.fifo_width_in > 0 ? s.fifo_width_in : s.width_in;
  const std::int64_t words_out = gap ? s.channels : s.channels / s.groups_out;
  const std::int64_t beats_out =
      gap ? s.frames * s.channels / s.width_out : s.frames * s.pixels * words_out / s.width_out;
  StreamBlockRun run;
  run.in_cycles.resize(static_cast<std::size_t>(s.ports_in));
  run.out_cycles.resize(static_cast<std::size_t>(s.ports_out));
  run.output.resize(static_cast<std::size_t>(s.ports_out));
  std::vector<std::unique_ptr<sc::BeatFifo>> in_fifos, out_fifos;
  std::vector<std::unique_ptr<sc_core::sc_module>> ends;
  for (std::int64_t q = 0; q < s.ports_in; ++q) {
    const auto u = static_cast<std::size_t>(q);
    in_fifos.push_back(std::make_unique<sc::BeatFifo>("in" + std::to_string(q), s.fifo_depth, fw, ctx));
    ends.push_back(std::make_unique<PortSource>(("source" + std::to_string(q)).c_str(), s, u, fw, in_fifos.back().get(),
                                                run.in_cycles[u], ctx));
  }
  for (std::int64_t k = 0; k < s.ports_out; ++k) {
    const auto u = static_cast<std::size_t>(k);
    out_fifos.push_back(std::make_unique<sc::BeatFifo>("out" + std::to_string(k), s.fifo_depth, s.width_out, ctx));
    ends.push_back(std::make_unique<PortSink>(("sink" + std::to_string(k)).c_str(), s, u, s.width_out, beats_out,
                                              out_fifos.back().get(), run.out_cycles[u], run.output[u]));
  }
  std::unique_ptr<sc::StreamBlock> block;
  std::unique_ptr<sc::GlobalAvgPool> pool;
  if (gap) {
    pool = std::make_unique<sc::GlobalAvgPool>("block", s.channels, s.pixels, s.width_in, s.frames, ctx);
    pool->bind_input(in_fifos[0].get());
    pool->bind_output({out_fifos[0].get()});
  } else {
    sc::StreamBlockParams p;
    const sc::Routing routing[] = {sc::Routing::Split, sc::Routing::Merge,    sc::Routing::Regroup,
                                   sc::Routing::Fork,  sc::Routing::GroupAdd, sc::Routing::EltwiseAdd,
                                   sc::Routing::Relu};
    p.routing = routing[static_cast<int>(s.kind)];
    p.channels = s.channels;
    p.pixels = s.pixels;
    p.groups_in = s.groups_in;
    p.groups_out = s.groups_out;
    p.ports_in = s.ports_in;
    p.ports_out = s.ports_out;
    p.width_in = s.width_in;
    p.width_out = s.width_out;
    p.latency = arch::kStreamLatency;
    if (s.kind == K::GroupAdd || s.kind == K::EltwiseAdd) p.latency += arch::kRequantPipeline;
    p.requant = s.requant;
    p.in_exps = s.in_exps;
    p.add_requant = s.add_requant;
    block = std::make_unique<sc::StreamBlock>("block", std::move(p), s.frames, ctx);
    for (std::int64_t q = 0; q < s.ports_in; ++q) block->bind_input(q, in_fifos[static_cast<std::size_t>(q)].get());
    for (std::int64_t k = 0; k < s.ports_out; ++k)
      block->bind_output(k, {out_fifos[static_cast<std::size_t>(k)].get()});
  }
  sc_core::sc_start();
  for (std::int64_t k = 0; k < s.ports_out; ++k)
    require(static_cast<std::int64_t>(run.out_cycles[static_cast<std::size_t>(k)].size()) == beats_out,
            "run_stream_block: output port " + std::to_string(k) + " of the SystemC block stopped after " +
                std::to_string(run.out_cycles[static_cast<std::size_t>(k)].size()) + " of " +
                std::to_string(beats_out) + " beats");
  return encode(run);
}

}  // namespace

std::int64_t line_buffer_capacity(const WindowBlockSpec& s) { return sc::LineBuffer::capacity(shape_of(s)); }

BlockRun run_window_block(const WindowBlockSpec& spec) {
  const auto results = run_pool(
      1, [&](std::size_t) { return run_child(spec); }, PoolOptions{});
  const JobResult& r = results.front();
  require(r.ok(), "run_window_block: the SystemC child " + std::string(to_string(r.status)) + ": " + r.error);
  return decode(r.output);
}

StreamBlockRun run_stream_block(const StreamBlockSpec& spec) {
  const auto results = run_pool(
      1, [&](std::size_t) { return run_stream_child(spec); }, PoolOptions{});
  const JobResult& r = results.front();
  require(r.ok(), "run_stream_block: the SystemC child " + std::string(to_string(r.status)) + ": " + r.error);
  return decode_stream(r.output);
}

}  // namespace mixtd::sim
