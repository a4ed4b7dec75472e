#include "mixtd/sim/Simulate.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <systemc>

#include "Pipeline.h"
#include "mixtd/arch/Analytical.h"
#include "mixtd/net/Load.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/numerics/Quantized.h"
#include "mixtd/sim/Functional.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::sim {

double SimResult::fps_batch1() const {
  return latency.empty() || latency.front() <= 0 ? 0 : clock_mhz * 1e6 / static_cast<double>(latency.front());
}
double SimResult::fps_peak() const {
  return interval <= 0 ? fps_batch1() : clock_mhz * 1e6 / static_cast<double>(interval);
}

namespace {

bool g_elaborated = false;

std::string kind_name(const arch::Module& m) { return std::string(arch::to_string(m.kind)); }

std::string bytes_text(double b) {
  const char* unit[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
  int i = 0;
  while (b >= 1000 && i < 6) b /= 1000, ++i;
  std::ostringstream s;
  s << std::setprecision(b < 10 && i > 0 ? 2 : 3) << b << " " << unit[i];
  return s.str();
}

// Half the machine's RAM: what one simulation may plan to hold.
double memory_limit() {
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGE_SIZE));
  return pages > 0 && page > 0 ? 0.5 * pages * page : 4e9;
}

// Refuses a run whose simulator memory, estimated from the design before
// anything is allocated, exceeds memory_limit(): per frame the host memory's
// input and output words, the functional run's input and golden copies and
// the latency records; per FIFO its slots (two cycle stamps each, plus the
// words with data). A FIFO depth is checked here, not trusted from the reader.
void check_memory(const arch::Design& d, const arch::Graph& g, const SimOptions& o) {
  const double in_words = static_cast<double>(d.network.input_shape.numel());
  double out_words = 0;
  for (const auto& m : g.modules)
    if (m.kind == arch::ModuleKind::HostOut) out_words = static_cast<double>(m.in_shape.numel());
  const double per_frame = (in_words + out_words) * (o.functional ? 3 : 1) + 4 * 8;
  double fifos = 0, biggest = 0;
  const arch::Stream* big = nullptr;
  for (const auto& s : g.streams) {
    const double b = static_cast<double>(s.count) * static_cast<double>(s.depth) *
                     (16.0 + (o.functional ? static_cast<double>(s.width) : 0.0));
    fifos += b;
    if (b > biggest) biggest = b, big = &s;
  }
  const double limit = memory_limit();
  const double frames = static_cast<double>(o.frames), total = per_frame * frames + fifos;
  if (total <= limit) return;
  if (fifos > limit / 2 && big)
    throw Error("simulate: design '" + d.name + "': its FIFOs need about " + bytes_text(fifos) +
                " of simulator memory (stream '" + big->name + "': " + std::to_string(big->count) + " x " +
                std::to_string(big->depth) + " beats of " + std::to_string(big->width) +
                " words), above the limit of " + bytes_text(limit) +
                " (half this machine's RAM); lower its fifo_depth");
  const auto most = static_cast<std::int64_t>(std::max(0.0, (limit - fifos) / per_frame));
  throw Error("simulate: --frames " + std::to_string(o.frames) + " of design '" + d.name + "' need about " +
              bytes_text(total) + " of simulator memory (" + bytes_text(per_frame) + " a frame), above the limit of " +
              bytes_text(limit) + " (half this machine's RAM): at most " + std::to_string(most) + " frames here");
}

SimResult simulate_checked(const arch::Design& d, const SimOptions& o);

}  // namespace

SimResult simulate(const arch::Design& d, const SimOptions& o) {
  require(!g_elaborated,
          "simulate: SystemC elaborates once per process; run further simulations with "
          "simulate_isolated() (a child process each)");
  require(o.frames >= 1 && o.frames <= kMaxFrames,
          "simulate: frames " + std::to_string(o.frames) + ": legal 1 .. " + std::to_string(kMaxFrames));
  require(o.cycle_limit <= kMaxCycles,
          "simulate: cycle limit " + std::to_string(o.cycle_limit) + ": legal 1 .. " + std::to_string(kMaxCycles));
  g_elaborated = true;
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  // SystemC's own reports: infos are dropped, errors come back as one
  // mixtd::Error line (its message, what it names, its code).
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
  try {
    return simulate_checked(d, o);
  } catch (const sc_core::sc_report& e) {
    const std::string detail = e.get_msg() ? e.get_msg() : "";
    std::string msg = std::string(e.get_msg_type()) + (detail.empty() ? "" : ": " + detail);
    for (auto& c : msg)
      if (c == '\n') c = ' ';
    throw Error("simulate: SystemC: " + msg + (e.get_id() >= 0 ? " (E" + std::to_string(e.get_id()) + ")" : ""));
  }
}

namespace {

SimResult simulate_checked(const arch::Design& d, const SimOptions& o) {
  const auto wall0 = std::chrono::steady_clock::now();
  const arch::Report report = arch::analyse(d);  // validates the design
  const arch::Graph& g = report.graph;
  check_memory(d, g, o);

  SimResult r;
  r.design = d.name;
  r.frames = o.frames;
  r.clock_mhz = d.clock_mhz;
  r.functional = o.functional;
  r.analytical_interval = report.interval;
  r.analytical_latency = report.latency_cycles(1);

  sc::SimContext ctx;
  ctx.clock_mhz = d.clock_mhz;
  ctx.data = o.functional;
  ctx.quantum = o.trace_path.empty() ? o.quantum : 0;
  ctx.cycle_limit = o.cycle_limit >= 0 ? o.cycle_limit : 50 * report.latency_cycles(o.frames) + 1000000;

  numerics::QNetwork q;
  numerics::Int8Tensor input;
  if (o.functional) {
    q = quantise(d, o.seed, o.data);
    input = input_frames(q, d.network.input_shape, o.frames, o.seed, o.data);
  }
  sc::HostStalls stalls{o.stall_probability, 8, o.seed};
  Pipeline p(d, g, o.functional ? &q : nullptr, o.frames, stalls, ctx);
  if (o.functional) {
    const auto words = stream_order(input);
    std::copy(words.begin(), words.end(), p.memory->bytes.begin() + p.input_base);
  }
  if (o.record_streams)
    for (auto& list : p.fifos)
      for (auto& f : list) f->record = true;
  sc_core::sc_trace_file* tf = nullptr;
  if (!o.trace_path.empty()) {
    std::string base = o.trace_path;
    if (base.size() > 4 && base.substr(base.size() - 4) == ".vcd") base.resize(base.size() - 4);
    tf = sc_core::sc_create_vcd_trace_file(base.c_str());
    // VCD time units must be powers of ten: the largest that divides the
    // clock period (1 ps at worst), so each cycle is a whole number of units.
    const auto period_ps = static_cast<std::int64_t>(std::llround(1e6 / d.clock_mhz));
    double unit_ps = 1;
    while (period_ps % static_cast<std::int64_t>(unit_ps * 10) == 0 && unit_ps < 1e6) unit_ps *= 10;
    tf->set_time_unit(unit_ps, sc_core::SC_PS);
    for (auto& list : p.fifos)
      for (auto& f : list) f->trace(tf);
  }

  // Run in slices of simulated time so a long run can report progress; a
  // slice ends early when nothing is left to do (done or deadlocked).
  {
    const sc_core::sc_time slice(1e6 / d.clock_mhz * 1e6, sc_core::SC_PS);  // 10^6 cycles
    auto last = std::chrono::steady_clock::now();
    for (;;) {
      sc_core::sc_start(slice, sc_core::SC_EXIT_ON_STARVATION);
      if (sc_core::sc_get_status() == sc_core::SC_STOPPED || !sc_core::sc_pending_activity()) break;
      const auto now = std::chrono::steady_clock::now();
      if (o.progress && now - last >= std::chrono::seconds(5)) {
        o.progress(p.host_out->frames_done, ctx.furthest);
        last = now;
      }
    }
  }
  if (tf) {
    // One more cycle, so the trace file records the last time step.
    if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
      sc_core::sc_start(sc_core::sc_time(1e6 / d.clock_mhz, sc_core::SC_PS));
    sc_core::sc_close_vcd_trace_file(tf);
  }

  const sc::HostOut& out = *p.host_out;
  r.completed = out.frames_done == o.frames && ctx.stop_reason.empty();
  r.preload_cycles = p.loader->done_cycle;
  const sc::Cycle t0 = p.host_in->first.empty() ? 0 : p.host_in->first.front();
  if (!r.completed) {
    if (!ctx.stop_reason.empty()) {
      r.error = "stopped: " + ctx.stop_reason + " (" + std::to_string(out.frames_done) + " of " +
                std::to_string(o.frames) + " frames out); raise it with --cycle-limit";
    } else {
      r.error = "deadlock at cycle " + std::to_string(ctx.furthest - t0) + ": no block can make progress (" +
                std::to_string(out.frames_done) + " of " + std::to_string(o.frames) + " frames out)";
    }
    r.blocked = p.blocked();
  }
  r.first_input_cycle = t0;
  if (o.record_streams)
    for (auto& list : p.fifos)
      for (auto& f : list) r.streams.push_back({f->name(), f->width(), f->recorded, f->recorded_at});
  for (std::size_t f = 0; f < out.last.size() && f < p.host_in->first.size(); ++f)
    r.latency.push_back(out.last[f] - p.host_in->first[f] + 1);
  if (out.last.size() >= 2) r.interval = out.last[out.last.size() - 1] - out.last[out.last.size() - 2];
  r.cycles = (out.last.empty() ? ctx.furthest : out.last.back()) - t0 + 1;

  for (std::size_t k = 0; k < g.modules.size(); ++k) {
    const arch::Module& m = g.modules[k];
    ModuleStats s;
    s.name = m.name;
    s.kind = kind_name(m);
    s.layer = m.layer;
    s.count = m.count;
    s.analytical_interval = m.cycles.interval();
    for (const BlockInstance& b : p.blocks[k]) {
      if (!b.stats || b.stats->busy < s.busy) continue;
      s.busy = b.stats->busy;
      s.stall_in = b.stats->stall_in;
      s.stall_out = b.stats->stall_out;
    }
    s.idle = std::max<std::int64_t>(0, r.cycles - s.busy - s.stall_in - s.stall_out);
    r.modules.push_back(s);
  }
  std::int64_t busiest = -1;
  for (const auto& s : r.modules)
    if (s.busy > busiest) {
      busiest = s.busy;
      r.bottleneck = s.name;
    }
  for (std::size_t si = 0; si < g.streams.size(); ++si) {
    const arch::Stream& s = g.streams[si];
    FifoStats f{s.name, s.count, s.depth, s.width, 0, s.skip};
    for (const auto& x : p.fifos[si]) {
      f.high_water = std::max(f.high_water, x->high_water());
      r.beats += x->pushed();
    }
    r.fifos.push_back(f);
  }

  if (o.functional && r.completed) {
    const numerics::Int8Tensor y = numerics::golden::run_network(q, input);
    const auto want = stream_order(y);
    const auto got_begin = p.memory->bytes.begin() + p.result_base;
    r.outputs_match = std::equal(want.begin(), want.end(), got_begin);
    if (y.h == 1 && y.w == 1) {
      r.golden_top1 = top1(y);
      r.top1 = top1(std::vector<std::int8_t>(got_begin, got_begin + static_cast<std::ptrdiff_t>(want.size())), y.c);
      if (!o.data.labels.empty())
        r.labels.assign(
            o.data.labels.begin(),
            o.data.labels.begin() + std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(o.data.labels.size()),
                                                             static_cast<std::ptrdiff_t>(y.n)));
    }
    if (!r.outputs_match) {
      std::size_t i = 0;
      while (want[i] == *(got_begin + static_cast<std::ptrdiff_t>(i))) ++i;
      const std::int64_t per = y.c * y.h * y.w, e = static_cast<std::int64_t>(i) % per;
      r.mismatch =
          "frame " + std::to_string(static_cast<std::int64_t>(i) / per) + " row " + std::to_string(e / (y.w * y.c)) +
          " col " + std::to_string((e / y.c) % y.w) + " channel " + std::to_string(e % y.c) + ": simulated " +
          std::to_string(*(got_begin + static_cast<std::ptrdiff_t>(i))) + ", golden " + std::to_string(want[i]);
    }
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace

}  // namespace mixtd::sim
