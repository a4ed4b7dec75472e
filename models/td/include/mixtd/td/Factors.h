// mixtd's factors file (`.factors`): decomposed layers with their trained
// stage weights, so that a fine-tuned design reaches the hardware models
// with the very factors it was trained with. Decomposing the dense product
// again is not the same: CP-ALS finds other (approximate) factors, an SVD
// its own signs and rotations (docs/design-yaml.md, `factors:`).
//
// Layout (little-endian): magic "MIXTDFAC", u32 version (2; 1 is read
// too), u32 layer count; per layer:
//   u32 name length, name
//   τ          u8 type (0 none, 1 svd-filter, 2 svd-spatial, 3 cpd), i64 g1, g2, rank
//   geometry   i64 n, c, chunk_out, chunk_in; u8 bias; u32 stage count; per
//              stage u32 role length, role, i64 in_ch, out_ch, kh, kw, sh, sw,
//              ph, pw, groups, u8 depthwise, i64 in c, h, w, out c, h, w
//   chunks     u32 count (g1·g2); per chunk i64 a, b, then per stage of the
//              geometry u64 count (the stage's weight count), f32 data
//   bias       u64 count (0 or n), f32 data
// version 2: then u32 exponent count; per entry u32 name length, name, i32
// exponent (the activation exponents, below; version 1 has none);
// then u32 CRC-32 of everything before it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "mixtd/td/Decompose.h"

namespace mixtd::td {

// Layer name → decomposed layer (numerics::Decompositions is the same type).
using FactorsMap = std::map<std::string, DecomposedLayer>;

// The BFP8 activation exponents the factors were trained or scored at, by
// tensor ("<input>", "<layer>", "<layer>#stage<k>", "<layer>#partial":
// numerics::ActivationExponents, the same type). Empty: none carried, the
// hardware models calibrate their own. Which keys a network needs is the
// caller's check (numerics::quantize_network at these exponents).
using ActivationExponents = std::map<std::string, int>;
inline constexpr int kMaxExponentMagnitude = 1100;  // beyond any finite double's block exponent

// What a fine-tune (or the search's corrected decomposition) hands on.
struct Factors {
  FactorsMap layers;
  ActivationExponents exponents;
};

inline constexpr std::uint32_t kFactorsVersion = 2;

// Writes atomically. Throws mixtd::Error naming the layer if one is not
// self-consistent (chunk count g1·g2, chunk (a, b) at index a·g2 + b, every
// chunk's stages shaped as the geometry's, weight and bias counts).
void save_factors(const std::filesystem::path& path, const FactorsMap& layers,
                  const ActivationExponents& exponents = {});
inline void save_factors(const std::filesystem::path& path, const Factors& f) {
  save_factors(path, f.layers, f.exponents);
}

// Reads a file written by save_factors. The file is untrusted input: every
// count and size is bounded by the bytes left, every value checked, and
// any fault is one mixtd::Error naming the file, the layer, the value and
// what would be legal. Whether a layer fits a network is the caller's check
// (compare its geometry with td::geometry of the network's layer).
// `exponents`, if given, receives the file's activation exponents (none
// from a version 1 file).
FactorsMap load_factors(const std::filesystem::path& path, ActivationExponents* exponents = nullptr);

}  // namespace mixtd::td
