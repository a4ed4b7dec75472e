// Internals of mixtd::td shared by Svd.cpp, CpAls.cpp and Decomposer.cpp:
// the per-chunk SVD record the Decomposer caches, and for each decomposition
// type the two directions "factors -> stage weights" and "stage weights ->
// dense chunk", kept side by side so that they cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "mixtd/td/Decompose.h"

namespace mixtd::td::detail {

// The full thin SVD M = U diag(sigma) Vᵀ of one chunk reshaped as the
// d1 x d2 matrix of its type (filter or spatial), k = min(d1, d2). Every
// rank 1..k is a truncation of it.
struct ChunkSvd {
  std::int64_t d1 = 0, d2 = 0;
  std::vector<float> u;      // [k columns of d1]: column ρ at u[ρ*d1 .. ρ*d1+d1)
  std::vector<float> sigma;  // [k], descending
  std::vector<float> v;      // [k columns of d2]: column ρ at v[ρ*d2 .. ρ*d2+d2)

  std::int64_t k() const { return static_cast<std::int64_t>(sigma.size()); }
  // Σ_{ρ >= r} σ_ρ², the squared Frobenius error of the rank-r truncation.
  double tail_energy(std::int64_t r) const;
};

// The SVD of chunk [n, c, kh, kw] (row-major) under `type` (SvdFilter or SvdSpatial).
ChunkSvd chunk_svd(const std::vector<float>& chunk, TdType type, std::int64_t n, std::int64_t c, std::int64_t kh,
                   std::int64_t kw);

// Stages "svd.1", "svd.2" of g.tau (rank g.tau.rank) from a chunk's SVD, √Σ in both.
std::vector<StageWeights> svd_stages(const ChunkSvd& svd, const LayerGeometry& g, std::int64_t kh);
// The dense chunk [g.chunk_out, g.chunk_in, kh, kw] two SVD stages stand for.
std::vector<float> svd_chunk_weight(const LayerGeometry& g, const ChunkFactors& f, std::int64_t kh, std::int64_t kw);

// Stages "cpd.1" .. "cpd.4" from the CP factors of a chunk (modes N', C', kh, kw),
// λ^(1/4) into each.
std::vector<StageWeights> cpd_stages(const CpdResult& cp, const LayerGeometry& g);
// The dense chunk the four CPD stages stand for.
std::vector<float> cpd_chunk_weight(const LayerGeometry& g, const ChunkFactors& f, std::int64_t kh, std::int64_t kw);

// Sum of squares in double (float sums lose the small errors the tests look at).
double sum_squares(const std::vector<float>& x);

}  // namespace mixtd::td::detail
