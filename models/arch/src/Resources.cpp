#include "mixtd/arch/Resources.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"

namespace mixtd::arch {

namespace {

constexpr std::array<std::pair<std::int64_t, std::int64_t>, 6> kBram18{
    {{16384, 1}, {8192, 2}, {4096, 4}, {2048, 9}, {1024, 18}, {512, 36}}};

// What yosys's memory_libmap (synth_xilinx, UltraScale+) charges for each
// way of holding a memory, the numbers it picks the cheapest by: a register
// bit 1, a LUTRAM cell 16, a BRAM18 129 (a BRAM36 257, two BRAM18's worth),
// and a ROM in logic 1 per 64 bits. Measured on rtl/lib's FIFOs
// (docs/rtl-resources.md); the model places memories by the same costs so
// that it agrees with the synthesised RTL.
constexpr double kRegisterBitCost = 1.0;
constexpr double kLutramCellCost = 16.0;
constexpr double kBram18Cost = 129.0;
constexpr double kRomBitCost = 1.0 / 64.0;
// A LUTRAM cell is 8 LUTs (one SLICEM's quarter).
constexpr double kLutsPerLutramCell = 8.0;

Memory place_kind(std::int64_t depth, std::int64_t width, MemoryKind kind) {
  Memory m;
  m.depth = depth;
  m.width_bits = width;
  m.kind = kind;
  switch (kind) {
    case MemoryKind::Registers:
      m.cost.ff = static_cast<double>(depth * width);
      break;
    case MemoryKind::Lutram:
      m.cost.lut = kLutsPerLutramCell * static_cast<double>(lutram_cells(depth, width));
      break;
    case MemoryKind::Bram:
      m.cost.bram18 = static_cast<double>(bram18_for(depth, width));
      break;
    case MemoryKind::Uram:
      m.cost.uram = static_cast<double>(uram_for(depth, width));
      break;
    case MemoryKind::Rom:
      // The ROM's columns in LUTs and its read register (w1 in
      // mixtd_conv_stage) in flip-flops, one per distinct column: in BRAM
      // that register is the block's own.
      m.cost.lut = static_cast<double>(rom_luts(depth, width));
      m.cost.ff = static_cast<double>(rom_columns(depth, width));
      break;
  }
  return m;
}

// The kind yosys gives a RAM (line buffers, FIFOs): registers, LUTRAM or
// BRAM18, the cheapest by its costs; registers on a tie with LUTRAM (a FIFO
// of 8 x 2 bits is 16 flip-flops), LUTRAM on a tie with BRAM.
MemoryKind ram_kind(std::int64_t depth, std::int64_t width) {
  const double regs = kRegisterBitCost * static_cast<double>(depth * width);
  const double lutram = kLutramCellCost * static_cast<double>(lutram_cells(depth, width));
  const double bram = kBram18Cost * static_cast<double>(bram18_for(depth, width));
  if (regs <= lutram && regs <= bram) return MemoryKind::Registers;
  return lutram <= bram ? MemoryKind::Lutram : MemoryKind::Bram;
}

// A ROM (weights) in logic when that is cheaper than BRAM18 by yosys's
// costs (ROMs never go to LUTRAM or registers in yosys: they are constants).
bool rom_in_logic(std::int64_t depth, std::int64_t width) {
  return kRomBitCost * static_cast<double>(depth * width) <=
         kBram18Cost * static_cast<double>(bram18_for(depth, width));
}

// One read port's copy of the RTL's line buffer (mixtd_line_buffer, a
// stage's or a pool's): a ring of `capacity` pixels (line_buffer_capacity,
// the slots the SystemC LineBuffer and the timing rules have), each
// ⌈channels/p⌉ beats of p words.
Memory line_buffer_ring(std::int64_t capacity, std::int64_t channels, std::int64_t p, const net::Bits& bits) {
  return place_memory(capacity * ceil_div(channels, p), p * bits.activation);
}

// Auto's rule: URAM only if it allocates strictly fewer bits.
MemoryKind auto_kind(std::int64_t depth, std::int64_t width, bool device_has_uram) {
  return device_has_uram && uram_for(depth, width) * 16 < bram18_for(depth, width) ? MemoryKind::Uram
                                                                                   : MemoryKind::Bram;
}

}  // namespace

std::int64_t bram18_for(std::int64_t depth, std::int64_t width) {
  if (depth <= 0 || width <= 0) return 0;
  std::int64_t best = -1;
  for (const auto& [d, w] : kBram18) {
    const std::int64_t n = ceil_div(depth, d) * ceil_div(width, w);
    if (best < 0 || n < best) best = n;
  }
  return best;
}

std::int64_t uram_for(std::int64_t depth, std::int64_t width) {
  if (depth <= 0 || width <= 0) return 0;
  if (width < 72) {
    // URAM has one fixed 72-bit aspect: narrower words are packed, k to a
    // row (a 72-bit read serves the next k reads of a narrow port).
    const std::int64_t k = 72 / width;
    return ceil_div(ceil_div(depth, k), 4096);
  }
  return ceil_div(depth, 4096) * ceil_div(width, 72);
}

std::int64_t lutram_cells(std::int64_t depth, std::int64_t width) {
  if (depth <= 0 || width <= 0) return 0;
  if (depth <= 32) return ceil_div(width, 14);      // RAM32M16: 32 x 14
  return ceil_div(depth, 64) * ceil_div(width, 7);  // RAM64M8: 64 x 7
}

std::int64_t rom_columns(std::int64_t depth, std::int64_t width) {
  if (depth <= 1 || width <= 0) return 0;  // one word: every bit a constant
  if (depth >= 48) return width;           // 2^48 possible columns: all distinct
  // Of K = 2^depth possible columns, `width` drawn at random leave
  // K·(1 − (1 − 1/K)^width) distinct ones; the two constant columns cost
  // nothing.
  const double k = std::ldexp(1.0, static_cast<int>(depth));
  const double seen = 1.0 - std::exp(static_cast<double>(width) * std::log1p(-1.0 / k));
  return std::min(width, static_cast<std::int64_t>(std::llround((k - 2.0) * seen)));
}

std::int64_t rom_luts(std::int64_t depth, std::int64_t width) {
  if (depth <= 0 || width <= 0) return 0;
  return ceil_div(depth, 64) * rom_columns(depth, width);
}

bool is_block_memory(std::int64_t depth, std::int64_t width) {
  return depth > 0 && width > 0 && ram_kind(depth, width) == MemoryKind::Bram;
}

Memory place_memory(std::int64_t depth, std::int64_t width) {
  if (depth <= 0 || width <= 0) return place_kind(0, 0, MemoryKind::Registers);
  return place_kind(depth, width, ram_kind(depth, width));
}

bool is_block_weight_memory(std::int64_t depth, std::int64_t width) {
  return depth > 0 && width > 0 && !rom_in_logic(depth, width);
}

Memory place_weight_memory(std::int64_t depth, std::int64_t width, WeightMemory choice, bool device_has_uram) {
  if (depth <= 0 || width <= 0) return place_kind(0, 0, MemoryKind::Rom);
  if (!is_block_weight_memory(depth, width)) return place_kind(depth, width, MemoryKind::Rom);
  switch (choice) {
    case WeightMemory::Bram:
      return place_kind(depth, width, MemoryKind::Bram);
    case WeightMemory::Uram:
      if (!device_has_uram)
        throw Error(
            "internal: a weight memory placed in URAM on a device without URAM (validate() rejects such designs)");
      return place_kind(depth, width, MemoryKind::Uram);
    case WeightMemory::Auto:
      break;
  }
  return place_kind(depth, width, auto_kind(depth, width, device_has_uram));
}

MemoryShape weight_memory_shape(const td::StageShape& s, const Psi& psi, const net::Bits& bits) {
  const std::int64_t mults = stage_multipliers(s, psi);
  return {ceil_div(s.weight_count(), mults), mults * bits.weight};
}

bool weight_memory_is_a_choice(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram) {
  if (!device_has_uram) return false;
  const MemoryShape w = weight_memory_shape(s, psi, bits);
  return is_block_weight_memory(w.depth, w.width_bits);
}

WeightMemory auto_weight_memory(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram) {
  if (!weight_memory_is_a_choice(s, psi, bits, device_has_uram)) return WeightMemory::Auto;
  const MemoryShape w = weight_memory_shape(s, psi, bits);
  return auto_kind(w.depth, w.width_bits, device_has_uram) == MemoryKind::Uram ? WeightMemory::Uram
                                                                               : WeightMemory::Bram;
}

std::int64_t dsps_for(const td::StageShape& s, const Psi& psi, const net::Bits& bits) {
  const bool packs = !s.depthwise && bits.weight <= 8 && bits.activation <= 8;
  return packs ? psi.p_in * psi.fine * ceil_div(psi.p_out, 2) : stage_multipliers(s, psi);
}

Memory stage_line_buffer(const td::StageShape& s, std::int64_t p_in, const net::Bits& bits) {
  // One read port's copy: stage_resources adds one per read port.
  return line_buffer_ring(line_buffer_capacity(s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.in.h, s.in.w), s.in_ch, p_in,
                          bits);
}

StageResources stage_resources(const td::StageShape& s, const Psi& psi, const net::Bits& bits, const Memory& weights,
                               const Memory& line_buffer) {
  StageResources r;
  r.weights = weights;
  // yosys (and Vivado) copy a RAM once per read port: the line buffer has
  // `fine` of them, one per window position read in a cycle.
  r.line_buffer = line_buffer;
  r.line_buffer.cost = line_buffer.cost.scaled(static_cast<double>(psi.fine));
  r.total = r.weights.cost + r.line_buffer.cost;
  r.total.dsp += static_cast<double>(dsps_for(s, psi, bits));
  // Control, adder trees, accumulators (32-bit) and requantisers.
  r.total += logic_resources(s.depthwise ? LogicBlock::DepthwiseStage : LogicBlock::Stage,
                             stage_logic_features(s, psi, weights));
  return r;
}

StageResources stage_resources(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool device_has_uram) {
  const MemoryShape w = weight_memory_shape(s, psi, bits);
  return stage_resources(s, psi, bits, place_weight_memory(w.depth, w.width_bits, psi.weight_memory, device_has_uram),
                         stage_line_buffer(s, psi.p_in, bits));
}

StageResources with_weight_memory(const StageResources& r, WeightMemory m, bool device_has_uram) {
  StageResources out = r;
  out.weights = place_weight_memory(r.weights.depth, r.weights.width_bits, m, device_has_uram);
  // Whole numbers throughout, so the swap is exact.
  out.total = r.total + r.weights.cost.scaled(-1.0) + out.weights.cost;
  return out;
}

LogicFeatures stage_logic_features(const td::StageShape& s, const Psi& psi, const Memory& weights) {
  const auto lanes = static_cast<double>(s.depthwise ? psi.p_in : psi.p_out);
  const auto rom =
      static_cast<double>(weights.kind == MemoryKind::Rom ? rom_columns(weights.depth, weights.width_bits) : 0);
  const auto mults = static_cast<double>(stage_multipliers(s, psi));
  if (s.depthwise) return {1.0, mults, lanes, rom};
  // A dense unit sums k = p_in·fine products; its LUTs per multiplier grow
  // with log2 k beyond k = 32 (the fit to whole networks' stages,
  // docs/rtl-resources.md; below it the constant and the lanes carry it).
  const double k = static_cast<double>(psi.p_in * psi.fine);
  return {1.0, mults * std::max(0.0, std::log2(k) - 5.0), lanes, rom};
}

std::string_view logic_block_name(LogicBlock b) {
  switch (b) {
    case LogicBlock::Stage:
      return "stage";
    case LogicBlock::DepthwiseStage:
      return "depthwise_stage";
    case LogicBlock::Pool:
      return "pool";
    case LogicBlock::Fifo:
      return "fifo";
    case LogicBlock::Split:
      return "split";
    case LogicBlock::Merge:
      return "merge";
    case LogicBlock::Regroup:
      return "regroup";
    case LogicBlock::Fork:
      return "fork";
    case LogicBlock::ReLU:
      return "relu";
    case LogicBlock::GroupAdd:
      return "group_add";
    case LogicBlock::EltwiseAdd:
      return "eltwise_add";
    case LogicBlock::GlobalAvgPool:
      return "global_avg_pool";
    case LogicBlock::Repack:
      return "repack";
    case LogicBlock::Host:
      return "host";
  }
  return "?";
}

std::array<std::string_view, kLogicFeatures> logic_feature_names(LogicBlock b) {
  switch (b) {
    case LogicBlock::Stage:
      return {"1", "multipliers*(log2(p_in*fine)-5)+", "out_lanes", "rom_columns"};
    case LogicBlock::DepthwiseStage:
      return {"1", "multipliers", "out_lanes", "rom_columns"};
    case LogicBlock::Pool:
      return {"1", "p*kh*kw", "p", "-"};
    case LogicBlock::Fifo:
    case LogicBlock::Host:
      return {"1", "width", "-", "-"};
    case LogicBlock::Split:
    case LogicBlock::Merge:
    case LogicBlock::Regroup:
    case LogicBlock::Fork:
    case LogicBlock::ReLU:
      return {"1", "lanes", "channels", "out_lanes*channels"};
    case LogicBlock::GroupAdd:
    case LogicBlock::EltwiseAdd:
      return {"1", "in_lanes", "out_lanes", "inputs*channels"};
    case LogicBlock::GlobalAvgPool:
      return {"1", "width", "channels", "-"};
    case LogicBlock::Repack:
      return {"1", "out_words", "in_words*log2(out_words)", "in_words*out_words"};
  }
  return {"1", "-", "-", "-"};
}

Resources logic_resources(const LogicFeatures& f, const LogicCoefficients& c) {
  Resources r;
  for (int i = 0; i < kLogicFeatures; ++i) {
    r.lut += c.lut[static_cast<std::size_t>(i)] * f[static_cast<std::size_t>(i)];
    r.ff += c.ff[static_cast<std::size_t>(i)] * f[static_cast<std::size_t>(i)];
  }
  // Whole cells, never negative (a fitted intercept can be below zero).
  r.lut = std::max(0.0, std::round(r.lut));
  r.ff = std::max(0.0, std::round(r.ff));
  return r;
}

Resources logic_resources(LogicBlock b, const LogicFeatures& f) { return logic_resources(f, logic_coefficients(b)); }

Resources fifo_resources(std::int64_t depth, std::int64_t width, const net::Bits& bits) {
  const Memory m = place_memory(depth, width * bits.activation);
  return m.cost + logic_resources(LogicBlock::Fifo, {1.0, static_cast<double>(width), 0.0, 0.0});
}

LogicFeatures repack_logic_features(std::int64_t w_in, std::int64_t w_out) {
  const auto in = static_cast<double>(w_in), out = static_cast<double>(w_out);
  return {1.0, out, in * std::log2(std::max(2.0, out)), in * out};
}

Resources repack_resources(std::int64_t w_in, std::int64_t w_out) {
  return logic_resources(LogicBlock::Repack, repack_logic_features(w_in, w_out));
}

Resources pool_line_buffers(const net::Shape& in, const net::PoolAttrs& a, std::int64_t p, const net::Bits& bits) {
  // Read at all kh·kw window positions each cycle: one copy per read port.
  const Memory m =
      line_buffer_ring(line_buffer_capacity(a.kh, a.kw, a.sh, a.sw, a.ph, a.pw, in.h, in.w), in.c, p, bits);
  return m.cost.scaled(static_cast<double>(a.kh * a.kw));
}

LogicFeatures pool_logic_features(std::int64_t kh, std::int64_t kw, std::int64_t p) {
  return {1.0, static_cast<double>(p * kh * kw), static_cast<double>(p), 0.0};
}

std::int64_t pool_dsps(bool average, std::int64_t p) { return average ? p : 0; }

std::int64_t global_avg_pool_dsps(std::int64_t width, std::int64_t pixels) {
  // mixtd_global_avg_pool's multiplier, round(2^24 / pixels).
  const std::int64_t m = ((std::int64_t{1} << 24) + pixels / 2) / pixels;
  return (m & (m - 1)) == 0 ? 0 : width;
}

}  // namespace mixtd::arch
