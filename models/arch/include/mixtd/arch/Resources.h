// Resource rules per block: DSP packing, memories by the BRAM18/URAM
// aspect-ratio tables, LUT/FF linear models (SPEC "Resources per module").
//
// LUT/FF coefficients are first estimates (fpgaConvNet-like magnitudes);
// the RTL issue refits them against yosys synthesis.
#pragma once

#include <cstdint>

#include "mixtd/arch/Design.h"
#include "mixtd/arch/Device.h"

namespace mixtd::arch {

// BRAM18 (RAMB18E2) configurations depth x width: 16K x 1, 8K x 2, 4K x 4,
// 2K x 9, 1K x 18, 512 x 36 (simple dual port). The fewest BRAM18 that hold
// a depth x width memory.
std::int64_t bram18_for(std::int64_t depth, std::int64_t width_bits);
// URAM288: 4K x 72; words narrower than 72 bits are packed ⌊72/width⌋ to a row.
std::int64_t uram_for(std::int64_t depth, std::int64_t width_bits);
// Memories this small go to LUTRAM (64 bits per LUT) instead of BRAM.
inline constexpr std::int64_t kLutramMaxBits = 2048;

enum class MemoryKind { Registers, Lutram, Bram, Uram };

struct Memory {
  MemoryKind kind = MemoryKind::Registers;
  std::int64_t depth = 0, width_bits = 0;
  Resources cost;
};

// A memory of depth x width bits. Weight memories may use URAM: the kind
// whose allocated bits are fewest is chosen (URAM counts 16 BRAM18 worth of
// bits), BRAM on a tie or when the device has no URAM.
Memory place_memory(std::int64_t depth, std::int64_t width_bits, bool allow_uram);

// DSP48E2 multiply packing: two multiplies per DSP when both operands are at
// most 8 bits (SPEC), else one.
std::int64_t dsps_for(std::int64_t multipliers, const net::Bits& bits);

struct StageResources {
  Memory weights;      // banks = multipliers, read in lockstep: one wide memory
  Memory line_buffer;  // p_in buffers of (kh−1) lines
  Resources total;     // one instance
};

// One instance of a stage with ψ.
StageResources stage_resources(const td::StageShape& s, const Psi& psi, const net::Bits& bits, bool allow_uram);

// A stream FIFO of `depth` beats of `width` words.
Resources fifo_resources(std::int64_t depth, std::int64_t width, const net::Bits& bits);

// Simple streaming blocks: LUT/FF linear in the stream width.
Resources stream_block_resources(std::int64_t width, std::int64_t ports, const net::Bits& bits);
// Pooling: a line buffer of (kh − 1) lines plus comparators/adders.
Resources pool_resources(const net::Shape& in, std::int64_t kh, std::int64_t kw, std::int64_t pw, std::int64_t p,
                         const net::Bits& bits);

}  // namespace mixtd::arch
