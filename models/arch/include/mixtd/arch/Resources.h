// Resource rules per block: DSP packing, memories placed as yosys places
// rtl/lib's (registers, LUTRAM, BRAM18/URAM by their aspect-ratio tables,
// ROMs in logic), LUT/FF linear models (SPEC "Resources per module";
// docs/accelerator.md "Resources").
//
// LUT/FF: each block kind is linear in a few features of its parameters,
// with coefficients (LogicCoefficients.cpp) fitted to yosys synth_xilinx of
// rtl/lib over a parameter sweep (docs/rtl-resources.md: `scripts/yosys-sweep`,
// then `mixtd resources fit`). Memories (line buffers, weights, FIFOs) are
// placed by the rules below and are not part of the fit.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"

namespace mixtd::arch {

// BRAM18 (RAMB18E2) configurations depth x width: 16K x 1, 8K x 2, 4K x 4,
// 2K x 9, 1K x 18, 512 x 36 (simple dual port). The fewest BRAM18 that hold
// a depth x width memory.
std::int64_t bram18_for(std::int64_t depth, std::int64_t width_bits);
// URAM288: 4K x 72; words narrower than 72 bits are packed ⌊72/width⌋ to a row.
std::int64_t uram_for(std::int64_t depth, std::int64_t width_bits);
// LUTRAM cells (8 LUTs each) of a depth x width simple-dual-port RAM:
// RAM32M16 (32 x 14) up to 32 deep, RAM64M8 (64 x 7) deeper.
std::int64_t lutram_cells(std::int64_t depth, std::int64_t width_bits);
// A depth x width ROM in logic, as yosys maps it: every bit column (its
// `depth` values) is a function of the address, and identical columns are
// one LUT and one read-register flip-flop (opt_merge), constant columns
// none. rom_columns is the distinct non-constant columns expected of random
// words (a 2-word ROM has at most 2: the address bit and its inverse;
// from about 16 words on, all `width`); docs/rtl-resources.md has the
// measurements. rom_luts: a LUT6 per 64 words of each such column.
std::int64_t rom_columns(std::int64_t depth, std::int64_t width_bits);
std::int64_t rom_luts(std::int64_t depth, std::int64_t width_bits);

// Registers, LUTRAM, BRAM18 or URAM hold a RAM; Rom is a constant memory
// (weights) in logic.
enum class MemoryKind { Registers, Lutram, Bram, Uram, Rom };

struct Memory {
  MemoryKind kind = MemoryKind::Registers;
  std::int64_t depth = 0, width_bits = 0;
  Resources cost;
};

// Memories are placed as yosys synth_xilinx places rtl/lib's (its
// memory_libmap costs: a register bit 1, a LUTRAM cell 16, a BRAM18 129, a
// ROM bit in logic 1/64; the cheapest wins). docs/rtl-resources.md has the
// measurements; SPEC's "LUTRAM below 2 Kb" rule is replaced by this one
// (docs/rtl-resources.md says why).
//
// A RAM (line buffer, FIFO) of depth x width bits: registers, LUTRAM or
// BRAM18, and whether that is BRAM18.
bool is_block_memory(std::int64_t depth, std::int64_t width_bits);
Memory place_memory(std::int64_t depth, std::int64_t width_bits);

// Whether a depth x width weight ROM goes to block RAM rather than logic.
bool is_block_weight_memory(std::int64_t depth, std::int64_t width_bits);

// A weight memory of depth x width bits: a ROM in logic when that is
// cheaper than BRAM18, else block RAM, and then `choice` says
// which kind: Bram, Uram, or Auto — URAM when it allocates fewer bits (one
// URAM counts 16 BRAM18 worth of bits), BRAM18 on a tie or without URAM.
// Uram on a device without URAM throws (validate() rejects such designs).
Memory place_weight_memory(std::int64_t depth, std::int64_t width_bits, WeightMemory choice, bool device_has_uram);

// DSP48E2 of one stage instance, as rtl/lib's MAC arrays use them. With
// weights and activations of at most 8 bits, a dense stage packs the two
// products of units 2k and 2k+1, which share their window word, into one
// DSP (WP486): p_in·fine·⌈p_out/2⌉ (an odd p_out's last unit has no
// partner); a depthwise stage has no shared operand and takes one DSP per
// multiply, p_in·fine. Wider operands: one DSP per multiply. SPEC's blanket
// "two per DSP" is the dense even case only (docs/rtl-resources.md).
std::int64_t dsps_for(const td::StageShape& s, const Psi& psi, const net::Bits& bits);

struct StageResources {
  Memory weights;      // banks = multipliers, read in lockstep: one wide memory
  Memory line_buffer;  // the ring, its cost once per read port (fine)
  Resources total;     // one instance
};

// One instance of a stage with ψ (its weight memory where
// psi.weight_memory says).
StageResources stage_resources(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram);

// The same from its memories placed already: `weights` the weight memory at
// ψ (place_weight_memory of weight_memory_shape, as psi.weight_memory says)
// and `line_buffer` stage_line_buffer(s, psi.p_in, bits). The weight memory depends
// on ψ only through the multipliers and the line buffer only through p_in,
// so a search enumerating a stage's ψ places each once.
StageResources stage_resources(const td::StageShape& s, const Psi& psi, const net::Bits& bits, const Memory& weights,
                               const Memory& line_buffer);
// One read port's copy of a stage's line buffer: the RTL's ring of
// line_buffer_capacity pixels, C/p_in beats of p_in words each (every
// window, 1×1 too, has one: at least two pixels).
Memory stage_line_buffer(const td::StageShape& s, std::int64_t p_in, const net::Bits& bits);

// The same stage instance with its weights where `m` says instead: only the
// weight memory changes (for searches that price both kinds of one unrolling).
StageResources with_weight_memory(const StageResources& r, WeightMemory m, bool device_has_uram);

// A stage's weight memory at ψ: every multiplier reads its own weight each
// cycle and all share one address, so it is one memory of
// ⌈weights/multipliers⌉ words of multipliers × weight bits.
struct MemoryShape {
  std::int64_t depth = 0, width_bits = 0;
};
MemoryShape weight_memory_shape(const td::StageShape& s, const Psi& psi, const net::Bits& bits);

// Whether psi.weight_memory decides anything for this stage: its weight
// memory is block RAM and the device has URAM. Otherwise every choice gives
// the same memory.
bool weight_memory_is_a_choice(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram);

// The kind Auto gives the stage's weight memory at ψ (Bram or Uram), or
// Auto where it is not a choice: a design's Auto made explicit without
// changing any resource.
WeightMemory auto_weight_memory(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram);

// ---- LUT/FF of the logic (everything but the memories) --------------------

// The block kinds with their own LUT/FF model (rtl/lib's modules).
enum class LogicBlock {
  Stage,           // mixtd_conv_stage, dense
  DepthwiseStage,  // mixtd_conv_stage, DEPTHWISE
  Pool,            // mixtd_pool
  Fifo,            // mixtd_stream_fifo (one)
  Split,           // mixtd_group_split
  Merge,           // mixtd_group_merge
  Regroup,         // mixtd_regroup
  Fork,            // mixtd_fork
  ReLU,            // mixtd_relu
  GroupAdd,        // mixtd_group_add
  EltwiseAdd,      // mixtd_eltwise_add
  GlobalAvgPool,   // mixtd_global_avg_pool
  Repack,          // mixtd_repack: a consumer reading another width than its stream's
  Host,            // the host interface (not in rtl/lib: not fitted)
};
inline constexpr int kLogicBlocks = 14;
inline constexpr int kLogicFeatures = 4;
// Feature 0 is always 1 (the constant term); logic_feature_names says what
// the others are for each block.
using LogicFeatures = std::array<double, kLogicFeatures>;
struct LogicCoefficients {
  LogicFeatures lut{}, ff{};
};

std::string_view logic_block_name(LogicBlock b);
std::array<std::string_view, kLogicFeatures> logic_feature_names(LogicBlock b);
// The committed coefficients (models/arch/src/LogicCoefficients.cpp).
const LogicCoefficients& logic_coefficients(LogicBlock b);
// LUT and FF of a block from its features: Σ coefficient·feature, never < 0.
Resources logic_resources(LogicBlock b, const LogicFeatures& f);
// The same at coefficients `c` (a refit under evaluation).
Resources logic_resources(const LogicFeatures& f, const LogicCoefficients& c);

// A stage's features: 1, multipliers, output lanes (requantisers and
// accumulators), and its weight ROM's distinct columns when the ROM is in
// logic (rom_columns; 0 in block RAM): the read register and the fabric
// that yosys cannot fold into the DSPs' input registers when the weights
// come from LUTs (docs/rtl-resources.md).
LogicFeatures stage_logic_features(const td::StageShape& s, const Psi& psi, const Memory& weights);

// A stream FIFO of `depth` beats of `width` words: its memory plus its logic.
Resources fifo_resources(std::int64_t depth, std::int64_t width, const net::Bits& bits);

// The mixtd_repack after a FIFO of `w_in`-word beats whose consumer reads
// `w_out` words a beat (Graph.h consumer_repacks says where): logic only,
// features 1, w_out, w_in·log2(max(2, w_out)) (the head beat shifted into
// any of w_out places) and w_in·w_out.
LogicFeatures repack_logic_features(std::int64_t w_in, std::int64_t w_out);
Resources repack_resources(std::int64_t w_in, std::int64_t w_out);

// Pooling: its line buffer (a stage's ring at p words a beat, copied for
// each of the kh·kw read ports), and the features of its logic (1, p·kh·kw,
// p); stream_module_resources adds the two.
Resources pool_line_buffers(const net::Shape& in, const net::PoolAttrs& pool, std::int64_t p, const net::Bits& bits);
LogicFeatures pool_logic_features(std::int64_t kh, std::int64_t kw, std::int64_t p);

// DSP48E2 of the pooling blocks, as yosys maps rtl/lib: an average pool
// multiplies each lane's window sum by the reciprocal of its window's count
// (mixtd_pool: one DSP per lane, p), a max pool none; a global average pool
// multiplies each lane's sum by the constant 2^24/pixels (one DSP per lane
// unless that is a power of two, a shift). stream_module_resources adds them.
std::int64_t pool_dsps(bool average, std::int64_t p);
std::int64_t global_avg_pool_dsps(std::int64_t width, std::int64_t pixels);

}  // namespace mixtd::arch
