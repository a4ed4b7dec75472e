// SVD of a chunk under both reshapes, and the two stages it gives.
//
//   filter   M[n, (c,i,j)]   = W[n,c,i,j]   (N' x C'·kh·kw)
//   spatial  M[(n,i), (c,j)] = W[n,c,i,j]   (N'·kh x C'·kw)
//
// M = U Σ Vᵀ; stage 1 = (√Σ Vᵀ)[:r], stage 2 = (U √Σ)[:, :r]. Splitting √Σ
// into both keeps the two stages' weights on the same scale, which int8
// quantisation later needs.
//
// Float throughout: the weights are float, and LAPACK's sgesdd reconstructs
// to ~1e-6 relative at full rank — far below what quantisation does later.
#include <armadillo>
#include <cmath>
#include <string>
#include <utility>

#include "TdInternal.h"
#include "mixtd/support/Error.h"

namespace mixtd::td::detail {

namespace {

bool is_spatial(TdType type) { return type == TdType::SvdSpatial; }

// Rows and columns of the reshaped matrix.
std::pair<std::int64_t, std::int64_t> svd_dims(TdType type, std::int64_t n, std::int64_t c, std::int64_t kh,
                                               std::int64_t kw) {
  return is_spatial(type) ? std::pair{n * kh, c * kw} : std::pair{n, c * kh * kw};
}

// Index of W[n,c,i,j] in the row-major spatial matrix M[(n,i), (c,j)].
std::int64_t spatial_index(std::int64_t n, std::int64_t c, std::int64_t i, std::int64_t j, std::int64_t kh,
                           std::int64_t cc, std::int64_t kw) {
  return (n * kh + i) * (cc * kw) + c * kw + j;
}

// Row-major M of the chunk. (Row-major M is column-major Mᵀ, which is how
// Armadillo will read it.)
std::vector<float> reshape_matrix(const std::vector<float>& chunk, TdType type, std::int64_t n, std::int64_t c,
                                  std::int64_t kh, std::int64_t kw) {
  if (!is_spatial(type)) return chunk;
  std::vector<float> m(chunk.size());
  std::size_t src = 0;
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j)
          m[static_cast<std::size_t>(spatial_index(a, b, i, j, kh, c, kw))] = chunk[src++];
  return m;
}

// The inverse of reshape_matrix.
std::vector<float> unreshape_matrix(const float* m, TdType type, std::int64_t n, std::int64_t c, std::int64_t kh,
                                    std::int64_t kw) {
  const auto total = static_cast<std::size_t>(n * c * kh * kw);
  if (!is_spatial(type)) return {m, m + total};
  std::vector<float> chunk(total);
  std::size_t dst = 0;
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) chunk[dst++] = m[spatial_index(a, b, i, j, kh, c, kw)];
  return chunk;
}

const StageWeights& stage(const ChunkFactors& f, std::size_t i, std::size_t expected_size) {
  require(f.stages.size() == 2, "SVD chunk (" + std::to_string(f.a) + ", " + std::to_string(f.b) + ") has " +
                                    std::to_string(f.stages.size()) + " stages, expected 2");
  const StageWeights& s = f.stages[i];
  require(s.weight.size() == expected_size, "SVD stage '" + s.shape.role + "' has " + std::to_string(s.weight.size()) +
                                                " weights, expected " + std::to_string(expected_size));
  return s;
}

}  // namespace

double ChunkSvd::tail_energy(std::int64_t r) const {
  double e = 0.0;
  for (std::int64_t i = r; i < k(); ++i) e += static_cast<double>(sigma[i]) * sigma[i];
  return e;
}

ChunkSvd chunk_svd(const std::vector<float>& chunk, TdType type, std::int64_t n, std::int64_t c, std::int64_t kh,
                   std::int64_t kw) {
  const auto [d1, d2] = svd_dims(type, n, c, kh, kw);
  std::vector<float> m = reshape_matrix(chunk, type, n, c, kh, kw);
  // Column-major Mᵀ (d2 x d1) over the row-major M, no copy. Mᵀ = V Σ Uᵀ,
  // so Armadillo's U and V are our V and U.
  const arma::fmat mt(m.data(), static_cast<arma::uword>(d2), static_cast<arma::uword>(d1), false, true);
  arma::fmat left, right;
  arma::fvec s;
  // Divide and conquer is the fast one; the QR-iteration driver is the
  // fallback LAPACK recommends when gesdd fails to converge.
  const bool ok = arma::svd_econ(left, s, right, mt, "both", "dc") || arma::svd_econ(left, s, right, mt, "both", "std");
  require(ok, "SVD of a " + std::to_string(d1) + "x" + std::to_string(d2) + " chunk failed (non-finite weights?)");
  ChunkSvd out;
  out.d1 = d1;
  out.d2 = d2;
  out.sigma.assign(s.begin(), s.end());
  out.u.assign(right.begin(), right.end());  // d1 x k, column-major
  out.v.assign(left.begin(), left.end());    // d2 x k, column-major
  return out;
}

std::vector<StageWeights> svd_stages(const ChunkSvd& svd, const LayerGeometry& g, std::int64_t kh) {
  const std::int64_t r = g.tau.rank, d1 = svd.d1, d2 = svd.d2;
  require(r >= 1 && r <= svd.k(), "SVD rank " + std::to_string(r) + " outside 1.." + std::to_string(svd.k()));
  // Stage 2 of the spatial reshape is a kh x 1 conv: rows (n, i) of U.
  const std::int64_t kh2 = is_spatial(g.tau.type) ? kh : 1;
  StageWeights s1{g.stages.at(0), std::vector<float>(static_cast<std::size_t>(r * d2))};
  StageWeights s2{g.stages.at(1), std::vector<float>(static_cast<std::size_t>(d1 * r))};
  const std::int64_t n = d1 / kh2;
  for (std::int64_t rho = 0; rho < r; ++rho) {
    const float sq = std::sqrt(svd.sigma[rho]);
    // Stage 1 [r, C', kh|1, kw]: row ρ of √Σ Vᵀ, in the flat (c, i, j) / (c, j) order of M's columns.
    for (std::int64_t q = 0; q < d2; ++q) s1.weight[rho * d2 + q] = sq * svd.v[rho * d2 + q];
    // Stage 2 [N', r, kh2, 1]: element (n, ρ, i) = (U√Σ)[(n, i), ρ].
    for (std::int64_t a = 0; a < n; ++a)
      for (std::int64_t i = 0; i < kh2; ++i) s2.weight[(a * r + rho) * kh2 + i] = sq * svd.u[rho * d1 + a * kh2 + i];
  }
  return {std::move(s1), std::move(s2)};
}

std::vector<float> svd_chunk_weight(const LayerGeometry& g, const ChunkFactors& f, std::int64_t kh, std::int64_t kw) {
  const std::int64_t n = g.chunk_out, c = g.chunk_in, r = g.tau.rank;
  const auto [d1, d2] = svd_dims(g.tau.type, n, c, kh, kw);
  const std::int64_t kh2 = is_spatial(g.tau.type) ? kh : 1;
  const auto& s1 = stage(f, 0, static_cast<std::size_t>(r * d2));
  const auto& s2 = stage(f, 1, static_cast<std::size_t>(d1 * r));
  // U' [(n, i), ρ] row-major from stage 2's [n, ρ, i].
  arma::fmat ut(static_cast<arma::uword>(r), static_cast<arma::uword>(d1));  // column-major Uᵀ = row-major U'
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t rho = 0; rho < r; ++rho)
      for (std::int64_t i = 0; i < kh2; ++i) ut(rho, a * kh2 + i) = s2.weight[(a * r + rho) * kh2 + i];
  // Row-major M = U' S1 is column-major Mᵀ = S1ᵀ U'ᵀ, and row-major S1 is column-major S1ᵀ
  // (a read-only view, no copy; Armadillo has no const view constructor).
  const arma::fmat s1t(const_cast<float*>(s1.weight.data()), static_cast<arma::uword>(d2), static_cast<arma::uword>(r),
                       false, true);
  const arma::fmat mt = s1t * ut;
  return unreshape_matrix(mt.memptr(), g.tau.type, n, c, kh, kw);
}

double sum_squares(const std::vector<float>& x) {
  double s = 0.0;
  for (float v : x) s += static_cast<double>(v) * v;
  return s;
}

}  // namespace mixtd::td::detail
