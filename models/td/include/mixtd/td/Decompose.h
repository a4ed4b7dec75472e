// Filling the stages of a τ with weights: strided channel grouping, SVD
// (both reshapes, √Σ split into both factors), CP-ALS, reconstruction.
//
// One SVD per (reshape, g1, g2) serves every rank: the Decomposer caches
// the full thin SVD of each chunk and truncates. CP factors are cached per
// (g1, g2, rank).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "mixtd/net/Layer.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::td {

// One stage with its float weights, PyTorch layout [out, in (1 if depthwise), kh, kw].
struct StageWeights {
  StageShape shape;
  std::vector<float> weight;
};

// The chain of stages of chunk (a, b).
struct ChunkFactors {
  std::int64_t a = 0, b = 0;
  std::vector<StageWeights> stages;
};

struct DecomposedLayer {
  LayerGeometry geometry;
  std::vector<ChunkFactors> chunks;  // index a * g2 + b
  std::vector<float> bias;           // [N]; empty if the conv has none

  const ChunkFactors& chunk(std::int64_t a, std::int64_t b) const {
    return chunks[static_cast<std::size_t>(a * geometry.tau.g2 + b)];
  }
  // The dense weight [N, C, kh, kw] these factors stand for.
  std::vector<float> reconstruct() const;
};

// Strided grouping: chunk (a, b) of W[N, C, kh, kw] is W[n ≡ a mod g1, c ≡ b mod g2],
// returned as [N/g1, C/g2, kh, kw] in natural channel order.
std::vector<float> extract_chunk(const std::vector<float>& w, std::int64_t n, std::int64_t c, std::int64_t kh,
                                 std::int64_t kw, std::int64_t g1, std::int64_t g2, std::int64_t a, std::int64_t b);
// The inverse: writes a chunk back into its place in W.
void scatter_chunk(const std::vector<float>& chunk, std::vector<float>& w, std::int64_t n, std::int64_t c,
                   std::int64_t kh, std::int64_t kw, std::int64_t g1, std::int64_t g2, std::int64_t a, std::int64_t b);

struct CpdOptions {
  int max_sweeps = 200;
  double tolerance = 1e-7;  // stop when |Δ relative error| < tolerance
  double ridge = 1e-9;      // λ added to the Gram diagonal (relative to its trace / r)
  std::uint64_t seed = 0;   // for the random fill of modes smaller than r
};

struct CpdResult {
  std::array<std::vector<float>, 4> factors;  // mode k: [dims[k], rank] row-major, unit columns
  std::vector<float> lambda;                  // [rank] column weights
  int sweeps = 0;
  double relative_error = 0.0;  // ||X - X̂||_F / ||X||_F
  bool converged = false;
};

// CP-ALS of a dense 4-way tensor (row-major, dims[0] slowest) at `rank`.
// SVD-based initialisation (leading left singular vectors of each unfolding,
// random fill where a mode is smaller than r), normalisation every sweep,
// ridge, MTTKRP as GEMMs without forming the large Khatri-Rao products.
CpdResult cp_als(const std::vector<float>& x, const std::array<std::int64_t, 4>& dims, std::int64_t rank,
                 const CpdOptions& options = {});

class Decomposer {
 public:
  // The layer must be a dense conv2d with shapes inferred and weights.
  explicit Decomposer(const net::Layer& conv, CpdOptions cpd = {});
  ~Decomposer();
  Decomposer(const Decomposer&) = delete;
  Decomposer& operator=(const Decomposer&) = delete;

  // Checks τ (check_tau) and returns its stages with weights. type none
  // returns the layer itself as one stage.
  DecomposedLayer decompose(const Tau& tau);

  // ||W - Ŵ||_F / ||W||_F of τ.
  double relative_error(const Tau& tau);

  // How many chunk SVDs have been computed so far (for the cache tests).
  std::int64_t svds_computed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mixtd::td
