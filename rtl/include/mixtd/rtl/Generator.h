// The RTL generator (issue 8): a Design's top level in SystemVerilog, the
// memory images of its weights and requantisers, and a file list — the
// blocks of rtl/lib instantiated and wired exactly as sim/Pipeline.cpp
// assembles the SystemC blocks (one instance per arch::Module instance, one
// mixtd_stream_fifo per physical stream, a mixtd_repack where a consumer
// reads another width than its producer writes).
//
// Deterministic: the same design and seed give the same bytes (the library
// sources are embedded in the binary, so the output does not depend on
// where the tool was built).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/numerics/Bfp8.h"
#include "mixtd/numerics/Tensor.h"

namespace mixtd::rtl {

struct GeneratedFile {
  std::string path;  // relative to the output directory
  std::string text;
};

// One physical stream of the top (a mixtd_stream_fifo), for co-simulation
// probes: its input-side wires <wire>_iv/_ir/_id are marked
// verilator public_flat_rd.
struct StreamProbe {
  std::string wire;                // q<stream>_<e>
  std::string name;                // as the SystemC BeatFifo: "<stream>" or "<stream>[e]"
  std::string producer, consumer;  // module names, "[i]" for instance i of several
  std::int64_t width = 1;          // words per beat
  std::int64_t words = 0;          // per frame
  std::int64_t h = 1, w = 1;       // the tensor's pixels per frame (rows, cols)
};

// Where the weights and requantisers come from (docs/rtl.md "Weight load").
enum class WeightLoad {
  Rom,     // $readmemh images (mem/*.hex) initialise the memories
  Stream,  // the top's load_* stream writes them after reset (rtl::weight_stream)
};

struct GeneratedRtl {
  std::string top;                           // the top module's name
  std::vector<GeneratedFile> files;          // the top, the library, memory images, files.f
  std::int64_t in_width = 1, out_width = 1;  // words per beat of the top's input / output
  std::int64_t in_words = 0, out_words = 0;  // per frame
  std::int64_t instances = 0;                // block instances (FIFOs not counted)
  std::int64_t slices = 0;                   // mixtd_reg_slice (SLR crossings × 2)
  std::map<std::string, int> slice_slr;      // each slice's SLR (TopOptions::slr)
  std::uint64_t hash = 0;                    // of every file's path and text
  std::vector<StreamProbe> streams;          // in graph order (producers before consumers)
  WeightLoad weights = WeightLoad::Rom;
  // WeightLoad::Stream: what the top's load_data port must take after
  // reset (WeightStream.h), and the number of its segments.
  std::vector<std::uint8_t> weight_stream;
  std::int64_t weight_segments = 0;
};

// Checks that every module can be mapped (clear mixtd::Error naming the
// layer, module and offending value otherwise) and generates the RTL.
// `seed` and `calibration` are sim::quantise's (the SystemC model's
// --functional uses the same): seeded images, or the data set's if given.
// What the top is for beyond simulation: the U250 kernel (`mixtd package`).
struct TopOptions {
  // Stream adds the ports load_valid/load_ready/load_data[63:0] and
  // load_segments/load_bad[15:0] (mixtd_weight_loader) to the top.
  WeightLoad weights = WeightLoad::Rom;
  // The SLR of each block instance (instance_name), from a floorplan: a
  // stream whose producer and consumer sit in different SLRs gets two
  // mixtd_reg_slice, slice_names(), one on each side (one cycle each).
  // Empty: none.
  std::map<std::string, int> slr;
};
GeneratedRtl generate(const arch::Design& d, std::uint64_t seed = 1, const numerics::FloatTensor& calibration = {},
                      const TopOptions& top = {});

// The hash GeneratedRtl::hash holds: of every file's path and text, in order
// (recompute it after editing `files`).
std::uint64_t hash_files(const std::vector<GeneratedFile>& files);

// ---- the names of the top's instances (DesignResources.h reads them) --------

// Instance i of module m: "u_<name>", '_' for what SystemVerilog does not
// allow, "_<i>" appended when m has several instances.
std::string instance_name(const arch::Module& m, std::int64_t i);
// The mixtd_stream_fifo of physical stream e of graph stream `stream`:
// "q<stream>_<e>"; its mixtd_repack, where it has one, "q<stream>_<e>_repack".
std::string fifo_name(std::size_t stream, std::int64_t e);
std::string repack_name(std::size_t stream, std::int64_t e);
// The two register slices of physical stream e of `stream` when it crosses
// SLRs: "<fifo>_slr_src" (the producer's SLR), "<fifo>_slr_dst" (the consumer's).
std::string slice_name(std::size_t stream, std::int64_t e, bool source);
// Whether the consumer of `s` reads another width than its producer writes,
// so that each of its FIFOs is followed by a mixtd_repack.
bool needs_repack(const arch::Graph& g, const arch::Stream& s);

// Writes the files under `dir` (created); each file is written to a
// temporary name and renamed, so an interrupted run leaves no torn file.
void write(const GeneratedRtl& g, const std::filesystem::path& dir);

// ---- memory images (also used by the per-block tests) -----------------------

// A stage's weight memory as mixtd_conv_stage reads it: one hex line per
// (block, channel chunk, kernel chunk) word, lane (l·P_IN + m)·FINE + n;
// depthwise one per (block, kernel chunk), lane m·FINE + n. `weight` is
// [out, in/groups (1 depthwise), kh, kw]. A grouped conv's block b holds
// output channels b·p_out … of group b·p_out / (out/groups); its channel
// chunks are those of its group's in/groups input channels (chunk cc, lane m
// = the group's input channel cc·p_in + m). `groups` is ignored depthwise.
std::string stage_weight_image(const std::vector<std::int8_t>& weight, std::int64_t in_ch, std::int64_t out_ch,
                               std::int64_t kh, std::int64_t kw, bool depthwise, std::int64_t p_in, std::int64_t p_out,
                               std::int64_t fine, std::int64_t groups = 1);
// Requantisers, `lanes` per line (40 bits each: {relu, shift[6:0], bias}),
// lane 0 in the low bits.
std::string requant_image(const std::vector<numerics::Requant>& r, std::int64_t lanes);

// The SystemVerilog library (rtl/lib), embedded: file name → text.
const std::vector<GeneratedFile>& library();

}  // namespace mixtd::rtl
