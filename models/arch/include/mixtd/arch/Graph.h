// The dataflow graph of a Design: modules (hardware blocks) and the streams
// between them (SPEC "The accelerator").
//
// A Module stands for `count` identical parallel instances — the g1·g2
// engines of a grouped layer share one Module per stage — so the graph of a
// design with 512 chunks stays small for the analytical model; the SystemC
// builder expands the instances.
//
// Per conv layer with τ = {t, g1, g2, r}:
//   [regroup]  Split (1 → g2) | Merge (g → 1) | RoundRobin (g → g2, lcm(g, g2) FIFOs)
//              when the incoming tensor's group count differs from g2
//   Fork       ×g2, one input group to its g1 engines            (g1 > 1)
//   Stage k    ×g1·g2, the chain of the engine's stages
//   GroupAdd   ×g1, sums the g2 partials of an output group      (g2 > 1)
// The layer's output stays as g1 group streams; the next layer regroups.
// A ReLU fused into its producer has no module. Add, pooling, global pool,
// host out take one stream (a Merge is inserted if needed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"
#include "mixtd/arch/Resources.h"
#include "mixtd/arch/Timing.h"

namespace mixtd::arch {

enum class ModuleKind {
  HostIn,
  HostOut,
  Stage,
  Split,
  Fork,
  GroupAdd,
  Merge,
  RoundRobin,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  EltwiseAdd,
  ReLU,
};

std::string_view to_string(ModuleKind k);

struct Module {
  std::string name;  // "<layer>/stage0", "<layer>/split", "host_in", ...
  ModuleKind kind = ModuleKind::Stage;
  std::string layer;  // the network layer it implements ("" for host)
  std::int64_t count = 1;

  // Per instance:
  std::int64_t ports_in = 1, ports_out = 1;
  std::int64_t width_in = 1, width_out = 1;  // words per beat, per port
  std::int64_t words_in = 0, words_out = 0;  // words per frame, per port
  net::Shape in_shape, out_shape;            // tensor per port
  bool relu = false;                         // fused ReLU (stages, group add, add)

  // Stage only.
  int stage_index = -1;
  td::StageShape shape;
  Psi psi;

  // Pools only.
  net::PoolAttrs pool;

  // RoundRobin only: lcm(ports_in, ports_out) FIFOs.
  std::int64_t fifos = 0;

  Cycles cycles;        // one instance
  Resources resources;  // one instance

  std::vector<int> inputs;  // stream ids, in port order
  std::vector<int> outputs;
};

struct Stream {
  std::string name;  // "<from module>-><to module>"
  int from = -1, to = -1;
  std::int64_t count = 1;  // physical streams this logical one stands for
  std::int64_t width = 1;  // words per beat (producer side)
  std::int64_t words = 0;  // per frame, per physical stream
  std::int64_t depth = 0;  // FIFO depth in beats
  bool skip = false;       // the residual path into an EltwiseAdd
  Resources resources;     // all `count` FIFOs
};

struct Graph {
  std::vector<Module> modules;  // topological order
  std::vector<Stream> streams;
  int find(std::string_view module_name) const;  // -1 if absent
};

// LUT/FF and memories of one instance of `m`, a module other than a stage,
// its input ports `width_in` words wide and its outputs `width_out` (the
// widths the solver changes; everything else from m: kind, ports, shapes,
// pool; a RoundRobin's lcm FIFOs `fifo_depth` deep). The one rule
// build_graph and the solver's evaluator both use.
Resources stream_module_resources(const Module& m, std::int64_t width_in, std::int64_t width_out, const net::Bits& bits,
                                  std::int64_t fifo_depth);
// The width a stream's consumer reads, words a beat: its width_in, or 0 for
// the host output port, which takes any width. Where it is not the
// stream's width the RTL puts a mixtd_repack after each of the stream's
// FIFOs (rtl/Generator); the one rule the graph, the solver's evaluator and
// the generator use.
std::int64_t consumer_read_width(const Module& consumer);
// Whether a stream `stream_width` words a beat is re-packed for a consumer
// reading `read_width` (consumer_read_width): the one condition.
bool reads_another_width(std::int64_t stream_width, std::int64_t read_width);
bool consumer_repacks(const Module& consumer, std::int64_t stream_width);
// One physical stream `width` words a beat, `depth` beats deep, whose
// consumer reads `read_width` (consumer_read_width): its FIFO, and its
// repack when read_width is neither 0 nor `width`.
Resources physical_stream_resources(std::int64_t depth, std::int64_t width, std::int64_t read_width,
                                    const net::Bits& bits);
// Stream s of g as it stands (its depth, width and consumer): all its
// `count` FIFOs and repacks; what build_graph puts in Stream::resources.
Resources stream_resources(const Graph& g, const Stream& s, const net::Bits& bits);
// Its logic alone: which LUT/FF model and its features (the pools' line
// buffers are the rest).
struct ModuleLogic {
  LogicBlock block = LogicBlock::Host;
  LogicFeatures features{};
};
ModuleLogic stream_module_logic(const Module& m, std::int64_t width_in, std::int64_t width_out);

// Builds the graph with every module's cycles and resources; skip-FIFO depths
// are sized so the residual never stalls the main path (unless overridden in
// design.fifo_depths). The design must be valid (validate()).
Graph build_graph(const Design& d);

// Every module's output arrival (Timing.h `arrival`), in topological order.
std::vector<Arrival> arrivals(const Graph& g);

}  // namespace mixtd::arch
