// CP-ALS of a dense 4-way tensor, and the four CPD stages of a conv chunk.
//
// The tensor is first permuted so that its largest mode leads (for a conv
// chunk that is N' or C'; kh and kw are tiny). With modes (0 = lead, 1, 2, 3)
// and J = I1·I2·I3, one sweep is two float GEMMs plus cheap contractions:
//
//   mode 0   M0 = X_(0) · (A1 ⊙ A2 ⊙ A3)          GEMM, 2·I0·J·r flops; the
//                                                  Khatri-Rao product is only J x r
//   T        T  = A0ᵀ · X_(0)                      GEMM, 2·I0·J·r flops
//   mode 1   M1[i1,ρ] = Σ_{i2,i3} T[ρ,i1,i2,i3] A2[i2,ρ] A3[i3,ρ]       J·r MACs
//   S        S[i2,i3,ρ] = Σ_{i1} T[ρ,i1,i2,i3] A1[i1,ρ]                 J·r MACs
//   mode 2   M2[i2,ρ] = Σ_{i3} S[i2,i3,ρ] A3[i3,ρ]
//   mode 3   M3[i3,ρ] = Σ_{i2} S[i2,i3,ρ] A2[i2,ρ]
//
// T depends only on A0, which is updated first, so modes 1..3 all come from
// the one T with the latest factors (plain Gauss-Seidel ALS, nothing
// approximated), and no other unfolding or Khatri-Rao product is formed.
//
// Factors are stored transposed, B_k = A_kᵀ (r x I_k): every loop then runs
// over contiguous components, every solve is a left-side one, and B_k's
// memory is already the row-major [I_k, r] layout CpdResult returns.
//
// Precision: GEMMs and factors are float; contractions accumulate in
// double. The r x r normal equations V B_k = M_kᵀ (V the Hadamard product of
// the other Grams) and the Grams are double while r < 256 (they then cost
// next to nothing). From r = 256 on they are float — at r ~ 1000 Grams,
// Cholesky and triangular solves are a third of a sweep's flops — as long as
// V is clearly positive definite in float; an ill-conditioned V (r far above
// the tensor's rank) goes to double with a growing ridge, which keeps it
// finite. The per-sweep error estimate works in double throughout.
#include <algorithm>
#include <armadillo>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "TdInternal.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::td {

namespace {

using Dims = std::array<std::int64_t, 4>;
using Perm = std::array<int, 4>;
using arma::fmat;
using arma::mat;
using arma::uword;

uword u(std::int64_t v) { return static_cast<uword>(v); }

// From this rank on the normal equations are tried in float first.
constexpr uword kFloatSolveRank = 256;
// Largest (max R_ii / min R_ii)² of the float Cholesky factor accepted: a
// lower bound on cond(V), kept far from 1/ε_float.
constexpr double kFloatSolveCondition = 1e4;
// Relative errors the per-sweep estimate resolves: its absolute noise on
// err² is ~1e-7·||X||² (float MTTKRP), i.e. ~3e-4 in err. Below this floor
// a sweep pays for the exact error instead.
constexpr double kEstimateFloor = 1e-2;

// y[i0,i1,i2,i3] = x[... with output mode k being input mode perm[k] ...], row-major.
std::vector<float> permute(const std::vector<float>& x, const Dims& d, const Perm& perm) {
  const Dims in_stride{d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  Dims od{}, st{};
  for (int k = 0; k < 4; ++k) {
    od[k] = d[perm[k]];
    st[k] = in_stride[perm[k]];
  }
  std::vector<float> y(x.size());
  std::size_t out = 0;
  for (std::int64_t i0 = 0; i0 < od[0]; ++i0)
    for (std::int64_t i1 = 0; i1 < od[1]; ++i1)
      for (std::int64_t i2 = 0; i2 < od[2]; ++i2)
        for (std::int64_t i3 = 0; i3 < od[3]; ++i3)
          y[out++] = x[static_cast<std::size_t>(i0 * st[0] + i1 * st[1] + i2 * st[2] + i3 * st[3])];
  return y;
}

Dims permuted(const Dims& d, const Perm& perm) { return {d[perm[0]], d[perm[1]], d[perm[2]], d[perm[3]]}; }

// Mode k first, the others in their order.
Perm mode_first(int k) {
  Perm p{k, 0, 0, 0};
  int j = 1;
  for (int m = 0; m < 4; ++m)
    if (m != k) p[j++] = m;
  return p;
}

// Component c of B (row c) := a random unit vector.
void random_unit_row(fmat& b, uword c, Rng& rng) {
  double n2 = 0.0;
  for (uword i = 0; i < b.n_cols; ++i) {
    const double v = rng.normal();
    b.at(c, i) = static_cast<float>(v);
    n2 += v * v;
  }
  if (n2 > 0) b.row(c) /= static_cast<float>(std::sqrt(n2));
}

// B_k for mode k: the leading left singular vectors of the unfolding X_(k)
// (eigenvectors of X_(k) X_(k)ᵀ), random unit components beyond I_k.
fmat init_factor(const std::vector<float>& y, const Dims& d, int k, std::int64_t r, Rng& rng) {
  const std::int64_t ik = d[k], rest = d[0] * d[1] * d[2] * d[3] / ik;
  std::vector<float> z = permute(y, d, mode_first(k));
  const fmat zt(z.data(), u(rest), u(ik), false, true);  // column i_k = slice i_k of X
  const mat gram = arma::conv_to<mat>::from(fmat(zt.t() * zt));
  fmat b(u(r), u(ik), arma::fill::zeros);
  arma::vec eval;
  mat evec;
  uword lead = 0;
  if (arma::eig_sym(eval, evec, gram)) {  // ascending eigenvalues
    lead = std::min(u(ik), u(r));
    for (uword c = 0; c < lead; ++c) b.row(c) = arma::conv_to<arma::frowvec>::from(evec.col(u(ik) - 1 - c).t());
  }
  for (uword c = lead; c < u(r); ++c) random_unit_row(b, c, rng);
  return b;
}

// w[c, (i2,i3)] = b2[c,i2] b3[c,i3]: the Khatri-Rao product of the two small modes.
fmat small_pair(const fmat& b2, const fmat& b3) {
  fmat w(b2.n_rows, b2.n_cols * b3.n_cols);
  for (uword i2 = 0; i2 < b2.n_cols; ++i2)
    for (uword i3 = 0; i3 < b3.n_cols; ++i3) w.col(i2 * b3.n_cols + i3) = b2.col(i2) % b3.col(i3);
  return w;
}

// kt[c, (i1,i2,i3)] = b1[c,i1] b2[c,i2] b3[c,i3]: (A1 ⊙ A2 ⊙ A3)ᵀ, r x J.
void khatri_rao_t(const fmat& b1, const fmat& w23, fmat& kt) {
  const uword r = b1.n_rows, q = w23.n_cols;
  kt.set_size(r, b1.n_cols * q);
  for (uword i1 = 0; i1 < b1.n_cols; ++i1) {
    const float* x = b1.colptr(i1);
    for (uword j = 0; j < q; ++j) {
      const float* w = w23.colptr(j);
      float* out = kt.colptr(i1 * q + j);
      for (uword c = 0; c < r; ++c) out[c] = x[c] * w[c];
    }
  }
}

// M1ᵀ[c, i1] = Σ_q T[c, (i1,q)] w23[c, q].
mat contract_mode1(const fmat& t, const fmat& w23, uword i1n) {
  const uword r = t.n_rows, q = w23.n_cols;
  mat m(r, i1n, arma::fill::zeros);
  for (uword i1 = 0; i1 < i1n; ++i1) {
    double* out = m.colptr(i1);
    for (uword j = 0; j < q; ++j) {
      const float* tc = t.colptr(i1 * q + j);
      const float* w = w23.colptr(j);
      for (uword c = 0; c < r; ++c) out[c] += static_cast<double>(tc[c]) * w[c];
    }
  }
  return m;
}

// S[c, q] = Σ_{i1} T[c, (i1,q)] b1[c, i1].
mat contract_lead(const fmat& t, const fmat& b1, uword q) {
  const uword r = t.n_rows;
  mat s(r, q, arma::fill::zeros);
  for (uword i1 = 0; i1 < b1.n_cols; ++i1) {
    const float* x = b1.colptr(i1);
    for (uword j = 0; j < q; ++j) {
      const float* tc = t.colptr(i1 * q + j);
      double* out = s.colptr(j);
      for (uword c = 0; c < r; ++c) out[c] += static_cast<double>(tc[c]) * x[c];
    }
  }
  return s;
}

// M2ᵀ[c, i2] = Σ_{i3} S[c, (i2,i3)] b3[c, i3]   (small_mode = 2), or
// M3ᵀ[c, i3] = Σ_{i2} S[c, (i2,i3)] b2[c, i2]   (small_mode = 3).
mat contract_small(const mat& s, const fmat& other, uword n2, uword n3, int small_mode) {
  const uword r = s.n_rows;
  mat m(r, small_mode == 2 ? n2 : n3, arma::fill::zeros);
  for (uword i2 = 0; i2 < n2; ++i2)
    for (uword i3 = 0; i3 < n3; ++i3) {
      const double* sc = s.colptr(i2 * n3 + i3);
      const float* o = other.colptr(small_mode == 2 ? i3 : i2);
      double* out = m.colptr(small_mode == 2 ? i2 : i3);
      for (uword c = 0; c < r; ++c) out[c] += sc[c] * o[c];
    }
  return m;
}

// B := V⁻¹ B for V = RᵀR, R the upper Cholesky factor arma::chol returns.
template <class eT>
bool cholesky_solve(const arma::Mat<eT>& rchol, arma::Mat<eT>& b) {
  char uplo = 'U';  // potrs only reads R; Armadillo's binding takes it non-const
  arma::blas_int n = static_cast<arma::blas_int>(rchol.n_rows), nrhs = static_cast<arma::blas_int>(b.n_cols), info = 0;
  arma::lapack::potrs<eT>(&uplo, &n, &nrhs, const_cast<eT*>(rchol.memptr()), &n, b.memptr(), &n, &info);
  return info == 0;
}

// The float attempt at B = (V + μI)⁻¹ Mᵀ into x; false if V + μI is not
// clearly positive definite in float or the result is not finite. V is
// restored; rchol is scratch.
bool solve_float(fmat& v, const fmat& mt, float mu, fmat& rchol, fmat& x) {
  v.diag() += mu;
  const bool factored = arma::chol(rchol, v);
  v.diag() -= mu;
  if (!factored) return false;
  const arma::fvec dg = arma::abs(rchol.diag());
  const double ratio = static_cast<double>(dg.max()) / std::max(static_cast<double>(dg.min()), 1e-300);
  if (!(ratio * ratio < kFloatSolveCondition)) return false;
  x = mt;
  return cholesky_solve(rchol, x) && x.is_finite();
}

// The double path, with a ridge that grows until rounding no longer leaves
// V + μI indefinite (r far above the tensor's rank). `grown` carries the
// ridge that last worked for this mode (0 if none was needed), so that the
// next sweep starts near it instead of failing its way up again; starting a
// decade below lets it shrink as the fit settles.
fmat solve_double(mat v, const mat& mt, const double requested, double scale, double& grown) {
  double mu = std::max(requested, grown / 10.0);
  mat rchol;
  double added = 0.0;
  for (int attempt = 0;; ++attempt) {
    v.diag() += mu - added;
    added = mu;
    if (arma::chol(rchol, v)) break;
    require(attempt < 20,
            "CP-ALS: the normal equations are not positive definite even with a ridge of " + std::to_string(mu));
    mu = std::max(mu * 100.0, 1e-14 * scale);
  }
  grown = mu > requested ? mu : 0.0;
  mat x = mt;
  require(cholesky_solve(rchol, x), "CP-ALS: the Cholesky solve failed");
  return arma::conv_to<fmat>::from(x);
}

// Unit components (rows of B), norms into λ. A component with no norm left
// (λ <= tiny) is restarted as a random unit vector with λ = 0, so that no
// Gram loses rank and nothing is divided by zero.
void normalise(fmat& b, arma::vec& lambda, double tiny, Rng& rng) {
  const uword r = b.n_rows;
  arma::vec n2(r, arma::fill::zeros);
  for (uword i = 0; i < b.n_cols; ++i) {
    const float* x = b.colptr(i);
    for (uword c = 0; c < r; ++c) n2[c] += static_cast<double>(x[c]) * x[c];
  }
  lambda = arma::sqrt(n2);
  arma::fvec inv(r);
  for (uword c = 0; c < r; ++c) {
    const bool alive = std::isfinite(lambda[c]) && lambda[c] > tiny;
    inv[c] = alive ? static_cast<float>(1.0 / lambda[c]) : 1.0f;
    if (!alive) lambda[c] = 0.0;
  }
  b.each_col() %= inv;
  for (uword c = 0; c < r; ++c)
    if (lambda[c] == 0.0) random_unit_row(b, c, rng);
}

// G = B Bᵀ in precision Real. A mode of a few indices (kh, kw) is a sum of
// I_k outer products, done directly: BLAS syrk at k = 3 is bound by writing
// and mirroring r² outputs several times over.
template <class Real>
arma::Mat<Real> gram_of(const fmat& b) {
  using RMat = arma::Mat<Real>;
  const uword r = b.n_rows;
  if (b.n_cols >= 16) {
    if constexpr (std::is_same_v<Real, float>) {
      return b * b.t();
    } else {
      const RMat bd = arma::conv_to<RMat>::from(b);
      return bd * bd.t();
    }
  }
  RMat g(r, r, arma::fill::zeros);
  for (uword i = 0; i < b.n_cols; ++i) {
    const float* x = b.colptr(i);
    for (uword c2 = 0; c2 < r; ++c2) {
      const Real s = x[c2];
      Real* out = g.colptr(c2);
      for (uword c = 0; c < r; ++c) out[c] += s * static_cast<Real>(x[c]);
    }
  }
  return g;
}

// The ALS state and sweep. Real is the precision of the Grams and of the
// first attempt at the normal equations (see the top of this file).
template <class Real>
class Als {
  using RMat = arma::Mat<Real>;

 public:
  Als(const std::vector<float>& y, const Dims& d, std::int64_t r, const CpdOptions& o)
      : d_(d), r_(u(r)), opt_(o), rng_(o.seed) {
    xt_ = fmat(y.data(), u(d[1] * d[2] * d[3]), u(d[0]));  // a copy: X_(0)ᵀ
    norm2_ = detail::sum_squares(y);
    for (int k = 1; k < 4; ++k) b_[k] = init_factor(y, d, k, r, rng_);
    // Mode 0 is solved first from the others; it needs a start only when X = 0.
    b_[0] = norm2_ > 0.0 ? fmat(r_, u(d[0]), arma::fill::zeros) : init_factor(y, d, 0, r, rng_);
    for (int k = 0; k < 4; ++k) gram_[k] = gram_of<Real>(b_[k]);
    lambda_.zeros(r_);
  }

  double norm2() const { return norm2_; }

  // One ALS sweep; returns the relative error estimated from the Grams and
  // the last MTTKRP (no reconstruction).
  double sweep() {
    const fmat w23 = small_pair(b_[2], b_[3]);  // b2, b3 stay until modes 0 and 1 are done
    khatri_rao_t(b_[1], w23, kt_);
    m0t_ = kt_ * xt_;  // M0ᵀ = (A1 ⊙ A2 ⊙ A3)ᵀ X_(0)ᵀ, r x I0
    if constexpr (std::is_same_v<Real, float>)
      update(0, m0t_);
    else
      update(0, arma::conv_to<mat>::from(m0t_));
    t_ = b_[0] * xt_.t();  // T = A0ᵀ X_(0), r x J
    update(1, real(contract_mode1(t_, w23, u(d_[1]))));
    const mat s = contract_lead(t_, b_[1], u(d_[2] * d_[3]));
    update(2, real(contract_small(s, b_[3], u(d_[2]), u(d_[3]), 2)));
    const double inner = update(3, real(contract_small(s, b_[2], u(d_[2]), u(d_[3]), 3)));
    // ||X̂||² = λᵀ (G0 ∘ G1 ∘ G2 ∘ G3) λ, with G0 ∘ G1 ∘ G2 the V of mode 3.
    double model2 = 0.0;
    for (uword c2 = 0; c2 < r_; ++c2) {
      const Real* v = v_.colptr(c2);
      const Real* g = gram_[3].colptr(c2);
      double col = 0.0;
      for (uword c = 0; c < r_; ++c) col += static_cast<double>(v[c]) * g[c] * lambda_[c];
      model2 += col * lambda_[c2];
    }
    const double err2 = std::max(0.0, norm2_ - 2.0 * inner + model2);
    return std::sqrt(err2 / norm2_);
  }

  // ||X - X̂||_F / ||X||_F by reconstructing once (the sweeps only estimate it).
  double exact_error() {
    khatri_rao_t(b_[1], small_pair(b_[2], b_[3]), kt_);
    fmat scaled = b_[0];
    scaled.each_col() %= arma::conv_to<arma::fvec>::from(lambda_);
    const fmat xhat = kt_.t() * scaled;  // J x I0, like xt_
    double e = 0.0;
    const float* x = xt_.memptr();
    const float* h = xhat.memptr();
    for (uword i = 0; i < xt_.n_elem; ++i) {
      const double diff = static_cast<double>(x[i]) - h[i];
      e += diff * diff;
    }
    return std::sqrt(e / norm2_);
  }

  // B_k, r x I_k column-major = A_k as row-major [I_k, r].
  const fmat& factor_t(int k) const { return b_[k]; }
  const arma::vec& lambda() const { return lambda_; }

 private:
  // The contractions accumulate in double; the solve takes them in Real.
  static RMat real(mat m) {
    if constexpr (std::is_same_v<Real, double>)
      return m;
    else
      return arma::conv_to<RMat>::from(m);
  }

  // Solves mode k from M_kᵀ, normalises, refreshes its Gram. Returns
  // <X, X̂> = Σ B_k ∘ M_kᵀ before normalisation (λ included).
  double update(int k, const RMat& mt) {
    const int o1 = k == 0 ? 1 : 0, o2 = k <= 1 ? 2 : 1, o3 = k <= 2 ? 3 : 2;
    v_ = gram_[o1] % gram_[o2] % gram_[o3];
    b_[k] = solve(mt, o1, o2, o3);
    double inner = 0.0;
    for (uword i = 0; i < mt.n_elem; ++i) inner += static_cast<double>(b_[k][i]) * mt[i];
    // Dead means negligible against the data: 1e-20·||X||, whatever X's scale.
    normalise(b_[k], lambda_, 1e-20 * std::sqrt(norm2_), rng_);
    gram_[k] = gram_of<Real>(b_[k]);
    return inner;
  }

  // The mode the other three are not.
  static int o0(int o1, int o2, int o3) { return 6 - o1 - o2 - o3; }

  // B = (V + μI)⁻¹ Mᵀ, μ = ridge·trace(V)/r: in float when Real is and V
  // allows it, otherwise in double from the Grams.
  fmat solve(const RMat& mt, int o1, int o2, int o3) {
    const double trace = static_cast<double>(arma::trace(v_)) / static_cast<double>(r_);
    require(std::isfinite(trace), "CP-ALS: the normal equations became non-finite");
    const double scale = trace > 0 ? trace : 1.0, mu = opt_.ridge * scale;
    if constexpr (std::is_same_v<Real, float>) {
      fmat x;
      if (float_ok_[o0(o1, o2, o3)] && solve_float(v_, mt, static_cast<float>(mu), rchol_, x)) return x;
      float_ok_[o0(o1, o2, o3)] = false;  // conditioning changes slowly: stay in double for this mode
      auto g = [&](int o) { return arma::conv_to<mat>::from(gram_[o]); };
      return solve_double(g(o1) % g(o2) % g(o3), arma::conv_to<mat>::from(mt), mu, scale, grown_[o0(o1, o2, o3)]);
    } else {
      return solve_double(v_, mt, mu, scale, grown_[o0(o1, o2, o3)]);
    }
  }

  Dims d_;
  uword r_;
  CpdOptions opt_;
  Rng rng_;
  fmat xt_;  // X_(0)ᵀ: J x I0, column i0 = slice i0
  double norm2_ = 0.0;
  std::array<fmat, 4> b_;
  std::array<RMat, 4> gram_;
  RMat v_;                                                // the last mode's normal-equation matrix
  fmat rchol_;                                            // Cholesky scratch of the float path
  std::array<bool, 4> float_ok_{true, true, true, true};  // per mode: float solves still worth trying
  std::array<double, 4> grown_{};                         // per mode: the ridge the double path last needed
  arma::vec lambda_;
  fmat kt_, t_, m0t_;  // kept between sweeps: same sizes, no reallocation
};

// The sweeps until the relative error changes by less than the tolerance.
template <class Real>
CpdResult run_als(const std::vector<float>& y, const Dims& d, std::int64_t rank, const CpdOptions& options,
                  const Perm& perm) {
  Als<Real> als(y, d, rank, options);
  CpdResult res;
  if (als.norm2() > 0.0) {
    double prev = std::numeric_limits<double>::infinity();
    while (res.sweeps < options.max_sweeps) {
      double err = als.sweep();
      // Below the estimate's noise floor a near-exact fit pays for the exact error.
      if (err < kEstimateFloor) err = als.exact_error();
      ++res.sweeps;
      if (std::abs(prev - err) < options.tolerance) {
        res.converged = true;
        break;
      }
      prev = err;
    }
    res.relative_error = als.exact_error();
  } else {
    res.converged = true;  // X = 0: λ = 0 is exact
  }
  for (int k = 0; k < 4; ++k) {
    const fmat& b = als.factor_t(k);  // column-major r x I_k = row-major [I_k, r]
    res.factors[perm[k]].assign(b.begin(), b.end());
  }
  res.lambda.assign(als.lambda().begin(), als.lambda().end());
  return res;
}

void check_input(const std::vector<float>& x, const Dims& d, std::int64_t rank) {
  for (int k = 0; k < 4; ++k)
    require(d[k] >= 1, "cp_als: mode " + std::to_string(k) + " has dimension " + std::to_string(d[k]));
  const std::int64_t total = d[0] * d[1] * d[2] * d[3];
  require(static_cast<std::int64_t>(x.size()) == total,
          "cp_als: tensor has " + std::to_string(x.size()) + " elements, dims give " + std::to_string(total));
  require(rank >= 1, "cp_als: rank must be at least 1, got " + std::to_string(rank));
  require(std::all_of(x.begin(), x.end(), [](float v) { return std::isfinite(v); }),
          "cp_als: the tensor has non-finite values");
}

}  // namespace

CpdResult cp_als(const std::vector<float>& x, const std::array<std::int64_t, 4>& dims, std::int64_t rank,
                 const CpdOptions& options) {
  check_input(x, dims, rank);
  // The largest mode leads: the GEMMs contract over it and the contractions
  // cost J·r = (size / I0)·r, smallest when I0 is largest.
  const int lead = static_cast<int>(std::max_element(dims.begin(), dims.end()) - dims.begin());
  const Perm perm = mode_first(lead);
  const Dims d = permuted(dims, perm);
  const std::vector<float> y = lead == 0 ? x : permute(x, dims, perm);

  return u(rank) >= kFloatSolveRank ? run_als<float>(y, d, rank, options, perm)
                                    : run_als<double>(y, d, rank, options, perm);
}

}  // namespace mixtd::td

namespace mixtd::td::detail {

namespace {

const StageWeights& cpd_stage(const ChunkFactors& f, std::size_t i, std::size_t expected_size) {
  require(f.stages.size() == 4, "CPD chunk (" + std::to_string(f.a) + ", " + std::to_string(f.b) + ") has " +
                                    std::to_string(f.stages.size()) + " stages, expected 4");
  const StageWeights& s = f.stages[i];
  require(s.weight.size() == expected_size, "CPD stage '" + s.shape.role + "' has " + std::to_string(s.weight.size()) +
                                                " weights, expected " + std::to_string(expected_size));
  return s;
}

}  // namespace

std::vector<StageWeights> cpd_stages(const CpdResult& cp, const LayerGeometry& g) {
  const std::int64_t r = g.tau.rank;
  require(static_cast<std::int64_t>(cp.lambda.size()) == r,
          "CPD factors have rank " + std::to_string(cp.lambda.size()) + ", τ says " + std::to_string(r));
  // Mode k's factor [I_k, r] row-major; its dimension from its size.
  auto dim = [&](int k) { return static_cast<std::int64_t>(cp.factors[k].size()) / r; };
  const std::int64_t n = dim(0);
  // λ^(1/4) into every stage: no stage carries the whole dynamic range of λ
  // (cpd.4 mixes all components into each output channel, so that matters
  // for its per-output-channel int8 scale).
  std::vector<float> s(static_cast<std::size_t>(r));
  for (std::int64_t p = 0; p < r; ++p) s[p] = static_cast<float>(std::pow(std::max(0.0f, cp.lambda[p]), 0.25));
  std::vector<StageWeights> st;
  for (int i = 0; i < 4; ++i) st.push_back({g.stages.at(static_cast<std::size_t>(i)), {}});
  // cpd.1 [r, C', 1, 1] = a1ᵀ; cpd.2 [r, 1, kh, 1] = a2ᵀ; cpd.3 [r, 1, 1, kw] = a3ᵀ  (per component ρ, a row)
  for (int k = 1; k <= 3; ++k) {
    const std::int64_t ik = dim(k);
    auto& w = st[static_cast<std::size_t>(k - 1)].weight;
    w.resize(static_cast<std::size_t>(r * ik));
    for (std::int64_t p = 0; p < r; ++p)
      for (std::int64_t i = 0; i < ik; ++i) w[p * ik + i] = s[p] * cp.factors[k][i * r + p];
  }
  // cpd.4 [N', r, 1, 1] = a0.
  auto& w4 = st[3].weight;
  w4.resize(static_cast<std::size_t>(n * r));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = 0; p < r; ++p) w4[i * r + p] = s[p] * cp.factors[0][i * r + p];
  return st;
}

std::vector<float> cpd_chunk_weight(const LayerGeometry& g, const ChunkFactors& f, std::int64_t kh, std::int64_t kw) {
  const std::int64_t n = g.chunk_out, c = g.chunk_in, r = g.tau.rank, d2 = c * kh * kw;
  const auto& b1 = cpd_stage(f, 0, static_cast<std::size_t>(r * c)).weight;
  const auto& b2 = cpd_stage(f, 1, static_cast<std::size_t>(r * kh)).weight;
  const auto& b3 = cpd_stage(f, 2, static_cast<std::size_t>(r * kw)).weight;
  const auto& b4 = cpd_stage(f, 3, static_cast<std::size_t>(n * r)).weight;
  // K[(c,i,j), ρ] = b1[ρ,c] b2[ρ,i] b3[ρ,j]; row-major chunk [N', d2] is
  // column-major chunkᵀ = K · b4ᵀ, and row-major b4 [N', r] is column-major b4ᵀ
  // (a read-only view, no copy).
  arma::fmat k(static_cast<arma::uword>(d2), static_cast<arma::uword>(r));
  for (std::int64_t p = 0; p < r; ++p) {
    float* out = k.colptr(static_cast<arma::uword>(p));
    for (std::int64_t ci = 0; ci < c; ++ci)
      for (std::int64_t i = 0; i < kh; ++i)
        for (std::int64_t j = 0; j < kw; ++j) *out++ = b1[p * c + ci] * b2[p * kh + i] * b3[p * kw + j];
  }
  const arma::fmat b4t(const_cast<float*>(b4.data()), static_cast<arma::uword>(r), static_cast<arma::uword>(n), false,
                       true);
  const arma::fmat chunk_t = k * b4t;
  return {chunk_t.begin(), chunk_t.end()};
}

}  // namespace mixtd::td::detail
