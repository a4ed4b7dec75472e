// NSGA-II's pieces (search/Nsga2.h) against values worked out by hand:
// dominance and Deb's constrained domination, the fronts of a drawn point set,
// crowding distance, survivor selection, the crowded comparison — and the
// hypervolume against boxes, inclusion–exclusion and an independent exact
// union volume by coordinate compression on random sets (d = 1..5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "mixtd/search/Nsga2.h"

namespace {

using namespace mixtd::search;

constexpr double kInf = std::numeric_limits<double>::infinity();
using Fronts = std::vector<std::vector<std::size_t>>;
using Indices = std::vector<std::size_t>;

ObjectivePoint feasible(std::vector<double> objectives) { return {std::move(objectives), 0.0}; }

TEST(Nsga2Dominance, ParetoOnObjectives) {
  EXPECT_TRUE(dominates({2, 3}, {1, 3}));
  EXPECT_TRUE(dominates({2, 3}, {1, 2}));
  EXPECT_FALSE(dominates({1, 3}, {2, 3}));
  EXPECT_FALSE(dominates({1, 4}, {2, 3}));  // a trade-off: neither
  EXPECT_FALSE(dominates({2, 3}, {1, 4}));
  EXPECT_FALSE(dominates({2, 3}, {2, 3}));  // equal points do not dominate
  EXPECT_TRUE(dominates({5}, {4}));
  EXPECT_THROW(dominates({1, 2}, {1, 2, 3}), std::invalid_argument);
}

TEST(Nsga2Dominance, ConstrainedFeasibilityRules) {
  const ObjectivePoint good{{1, 1}, 0};
  const ObjectivePoint better{{2, 2}, 0};
  const ObjectivePoint great_but_infeasible{{9, 9}, 0.1};
  const ObjectivePoint worse_violation{{9, 9}, 0.5};
  const ObjectivePoint poor_small_violation{{0, 0}, 0.2};
  // Feasible beats infeasible whatever the objectives say.
  EXPECT_TRUE(constrained_dominates(good, great_but_infeasible));
  EXPECT_FALSE(constrained_dominates(great_but_infeasible, good));
  // Two infeasible: the smaller violation wins, objectives ignored.
  EXPECT_TRUE(constrained_dominates(poor_small_violation, worse_violation));
  EXPECT_FALSE(constrained_dominates(worse_violation, poor_small_violation));
  EXPECT_TRUE(constrained_dominates(great_but_infeasible, poor_small_violation));
  // Equal violations: neither.
  EXPECT_FALSE(constrained_dominates(ObjectivePoint{{5, 5}, 0.3}, ObjectivePoint{{1, 1}, 0.3}));
  // Two feasible: plain dominance, equal points neither way.
  EXPECT_TRUE(constrained_dominates(better, good));
  EXPECT_FALSE(constrained_dominates(good, better));
  EXPECT_FALSE(constrained_dominates(good, good));
  EXPECT_FALSE(constrained_dominates(ObjectivePoint{{1, 4}, 0}, ObjectivePoint{{2, 3}, 0}));
}

// Drawn on paper (both maximised; the digits in the plot are indices):
//   5 | 6
//   4 | 4     3
//   3 |    0
//   2 | 2     7  8
//   1 |    5        1
//     +--------------
//       1  2  3  4  5
// Front 0: (1,5) (3,4) (4,2) (5,1); front 1: (2,3) (1,4) (3,2) — each below a
// front-0 point; front 2: (1,2) below (2,3), (2,1) below (3,2).
std::vector<ObjectivePoint> drawn_set() {
  return {feasible({2, 3}), feasible({5, 1}), feasible({1, 2}), feasible({3, 4}), feasible({1, 4}),
          feasible({2, 1}), feasible({1, 5}), feasible({3, 2}), feasible({4, 2})};
}

TEST(Nsga2Sort, DrawnSetHasThreeFronts) {
  EXPECT_EQ(non_dominated_sort(drawn_set()), (Fronts{{1, 3, 6, 8}, {0, 4, 7}, {2, 5}}));
}

TEST(Nsga2Sort, EmptyAndDuplicates) {
  EXPECT_TRUE(non_dominated_sort({}).empty());
  // Equal points do not dominate each other: they share a front.
  EXPECT_EQ(non_dominated_sort({feasible({1, 1}), feasible({2, 2}), feasible({1, 1})}), (Fronts{{1}, {0, 2}}));
}

TEST(Nsga2Sort, InfeasibleAfterAllFeasibleByViolation) {
  std::vector<ObjectivePoint> points = drawn_set();
  points.push_back({{10, 10}, 0.5});  // 9: best objectives, but infeasible
  points.push_back({{0, 0}, 0.2});    // 10
  points.push_back({{7, 7}, 0.9});    // 11
  points.push_back({{0, 9}, 0.2});    // 12: same violation as 10 — same front
  EXPECT_EQ(non_dominated_sort(points), (Fronts{{1, 3, 6, 8}, {0, 4, 7}, {2, 5}, {10, 12}, {9}, {11}}));
}

// Every front is mutually non-dominated, every later point is dominated by
// something in the front just before, and no point is dominated by a later
// front — on random sets with infeasible points and many ties.
TEST(Nsga2Sort, RandomSetsSatisfyFrontProperties) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> coord(0, 6);
  std::uniform_int_distribution<int> violation(-3, 3);  // <= 0: feasible
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<ObjectivePoint> points;
    for (int i = 0; i < 40; ++i) {
      points.push_back(
          {{double(coord(rng)), double(coord(rng)), double(coord(rng))}, std::max(0, violation(rng)) / 4.0});
    }
    const Fronts fronts = non_dominated_sort(points);
    std::size_t total = 0;
    for (std::size_t f = 0; f < fronts.size(); ++f) {
      total += fronts[f].size();
      EXPECT_TRUE(std::is_sorted(fronts[f].begin(), fronts[f].end()));
      for (std::size_t a : fronts[f]) {
        for (std::size_t b : fronts[f]) EXPECT_FALSE(constrained_dominates(points[a], points[b]));
        if (f > 0) {
          EXPECT_TRUE(std::any_of(fronts[f - 1].begin(), fronts[f - 1].end(),
                                  [&](std::size_t p) { return constrained_dominates(points[p], points[a]); }));
        }
        for (std::size_t g = f + 1; g < fronts.size(); ++g) {
          for (std::size_t b : fronts[g]) EXPECT_FALSE(constrained_dominates(points[b], points[a]));
        }
      }
    }
    EXPECT_EQ(total, points.size());
  }
}

// A 5-point front (A..E), the second objective on twice the first's range so
// a wrong normalisation shows:
//   A(0,20) B(1,14) C(3,12) D(6,4) E(10,0); f1 range 10, f2 range 20.
//   f1 ascending A0 B1 C3 D6 E10: A, E infinite;
//     B (3-0)/10 = 0.3, C (6-1)/10 = 0.5, D (10-3)/10 = 0.7.
//   f2 ascending E0 D4 C12 B14 A20: E, A infinite;
//     D (12-0)/20 = 0.6, C (14-4)/20 = 0.5, B (20-12)/20 = 0.4.
//   Sums: A inf, B 0.7, C 1.0, D 1.3, E inf.
// Indexed so that it also serves as front 1 under two front-0 points and over
// one front-2 point (for nsga2_select).
std::vector<ObjectivePoint> crowding_set() {
  return {
      feasible({6, 4}),    // 0: D
      feasible({20, 30}),  // 1: front 0 (dominates A..E)
      feasible({0, 20}),   // 2: A
      feasible({0, 0}),    // 3: front 2 (below A and E)
      feasible({10, 0}),   // 4: E
      feasible({3, 12}),   // 5: C
      feasible({30, 21}),  // 6: front 0
      feasible({1, 14}),   // 7: B
  };
}

TEST(Nsga2Crowding, FivePointFrontByHand) {
  const auto points = crowding_set();
  // Front given out of order: the result follows it. Points 1, 3, 6 lie
  // outside the front and must not widen the ranges.
  const std::vector<double> d = crowding_distance(points, {4, 7, 0, 2, 5});
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0], kInf);          // E
  EXPECT_NEAR(d[1], 0.7, 1e-12);  // B
  EXPECT_NEAR(d[2], 1.3, 1e-12);  // D
  EXPECT_EQ(d[3], kInf);          // A
  EXPECT_NEAR(d[4], 1.0, 1e-12);  // C
}

TEST(Nsga2Crowding, SmallFrontsAreAllInfinite) {
  const auto points = crowding_set();
  EXPECT_EQ(crowding_distance(points, {5}), (std::vector<double>{kInf}));
  EXPECT_EQ(crowding_distance(points, {5, 7}), (std::vector<double>{kInf, kInf}));
  EXPECT_TRUE(crowding_distance(points, {}).empty());
}

TEST(Nsga2Crowding, FlatObjectiveAndTiesByIndex) {
  // f2 flat: contributes 0 to the middle point, but the boundaries by index
  // (0 and 2) are infinite anyway. f1: point 1 gets (3-1)/2 = 1.
  const std::vector<ObjectivePoint> line{feasible({1, 5}), feasible({2, 5}), feasible({3, 5})};
  EXPECT_EQ(crowding_distance(line, {0, 1, 2}), (std::vector<double>{kInf, 1.0, kInf}));
  // All equal: the lowest and highest index are the boundaries, whatever the
  // order of the front.
  const std::vector<ObjectivePoint> same(4, feasible({0, 0}));
  EXPECT_EQ(crowding_distance(same, {3, 1, 0, 2}), (std::vector<double>{kInf, 0.0, kInf, 0.0}));
  // A tie at the minimum: the lower index (0) is the boundary, 1 is interior
  // with (1 - 0) / 2 = 0.5; 2 gets (2 - 0) / 2 = 1. Front given as {2, 1, 3, 0}.
  const std::vector<ObjectivePoint> tied{feasible({0}), feasible({0}), feasible({1}), feasible({2})};
  EXPECT_EQ(crowding_distance(tied, {2, 1, 3, 0}), (std::vector<double>{1.0, 0.5, kInf, kInf}));
}

TEST(Nsga2Select, CutsTheLastFrontByCrowding) {
  const auto points = crowding_set();
  ASSERT_EQ(non_dominated_sort(points), (Fronts{{1, 6}, {0, 2, 4, 5, 7}, {3}}));
  EXPECT_TRUE(nsga2_select(points, 0).empty());
  // Front 0 fits whole at keep >= 2; cut at 1 its two points are both
  // infinite, so the lower index wins.
  EXPECT_EQ(nsga2_select(points, 1), (Indices{1}));
  EXPECT_EQ(nsga2_select(points, 2), (Indices{1, 6}));
  // Front 1 cut: A(2) and E(4) infinite (lower index first), then D(0) 1.3,
  // C(5) 1.0, B(7) 0.7.
  EXPECT_EQ(nsga2_select(points, 3), (Indices{1, 6, 2}));
  EXPECT_EQ(nsga2_select(points, 5), (Indices{1, 6, 2, 4, 0}));
  EXPECT_EQ(nsga2_select(points, 6), (Indices{1, 6, 2, 4, 0, 5}));
  // Whole fronts go in index order.
  EXPECT_EQ(nsga2_select(points, 7), (Indices{1, 6, 0, 2, 4, 5, 7}));
  EXPECT_EQ(nsga2_select(points, 8), (Indices{1, 6, 0, 2, 4, 5, 7, 3}));
  EXPECT_EQ(nsga2_select(points, 100), (Indices{1, 6, 0, 2, 4, 5, 7, 3}));
}

TEST(Nsga2Select, InfeasibleGoLast) {
  std::vector<ObjectivePoint> points = crowding_set();
  points.push_back({{99, 99}, 0.4});  // 8
  points.push_back({{99, 99}, 0.1});  // 9
  EXPECT_EQ(nsga2_select(points, 9), (Indices{1, 6, 0, 2, 4, 5, 7, 3, 9}));
}

TEST(Nsga2Tournament, RankThenCrowding) {
  const RankCrowding rc = rank_and_crowding(crowding_set());
  EXPECT_EQ(rc.rank, (Indices{1, 0, 1, 2, 1, 1, 0, 1}));
  ASSERT_EQ(rc.crowding.size(), 8u);
  EXPECT_EQ(rc.crowding[1], kInf);
  EXPECT_EQ(rc.crowding[3], kInf);  // alone in front 2
  EXPECT_NEAR(rc.crowding[0], 1.3, 1e-12);
  EXPECT_NEAR(rc.crowding[5], 1.0, 1e-12);
  EXPECT_NEAR(rc.crowding[7], 0.7, 1e-12);
  EXPECT_TRUE(crowded_less(rc, 1, 0));  // rank 0 over rank 1
  EXPECT_FALSE(crowded_less(rc, 0, 1));
  EXPECT_TRUE(crowded_less(rc, 7, 3));  // rank 1 over rank 2, infinite distance or not
  EXPECT_FALSE(crowded_less(rc, 3, 7));
  EXPECT_TRUE(crowded_less(rc, 2, 0));  // same rank: inf over 1.3
  EXPECT_TRUE(crowded_less(rc, 0, 5));  // 1.3 over 1.0
  EXPECT_FALSE(crowded_less(rc, 5, 0));
  EXPECT_FALSE(crowded_less(rc, 2, 4));  // both infinite: neither
  EXPECT_FALSE(crowded_less(rc, 4, 2));
  EXPECT_FALSE(crowded_less(rc, 5, 5));
}

using Points = std::vector<std::vector<double>>;

TEST(Nsga2Hypervolume, OnePointIsItsBox) {
  EXPECT_DOUBLE_EQ(hypervolume({{3}, {5}}, {1}), 4.0);
  EXPECT_DOUBLE_EQ(hypervolume({{2, 3}}, {0, 0}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({{2, 3, 4}}, {0, 0, 0}), 24.0);
  EXPECT_DOUBLE_EQ(hypervolume({{2, 3, 4}}, {1, 1, 1}), 6.0);          // 1 * 2 * 3
  EXPECT_DOUBLE_EQ(hypervolume({{2, 3, 4, 5}}, {1, 1, 1, -1}), 36.0);  // 1 * 2 * 3 * 6
  EXPECT_DOUBLE_EQ(hypervolume({}, {0, 0}), 0.0);
}

TEST(Nsga2Hypervolume, Staircase2D) {
  // Strips from the right: 3*1 + 2*(2-1) + 1*(3-2) = 6.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 3}, {2, 2}, {3, 1}}, {0, 0}), 6.0);
  // Duplicates and dominated points change nothing.
  EXPECT_DOUBLE_EQ(hypervolume({{2, 2}, {1, 1}, {3, 1}, {1, 3}, {2, 2}, {0.5, 2.5}}, {0, 0}), 6.0);
  // Against ref (0.5, 0.5): 2.5*0.5 + 1.5*1 + 0.5*1 = 3.25.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 3}, {2, 2}, {3, 1}}, {0.5, 0.5}), 3.25);
}

TEST(Nsga2Hypervolume, OverlappingBoxes3D) {
  // |[0,(2,2,2)]| + |[0,(3,1,1)]| - |[0,(2,1,1)]| = 8 + 3 - 2 = 9.
  EXPECT_DOUBLE_EQ(hypervolume({{2, 2, 2}, {3, 1, 1}}, {0, 0, 0}), 9.0);
  // 6 + 6 - |[0,(1,2,1)]| = 12 - 2 = 10.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 2, 3}, {3, 2, 1}}, {0, 0, 0}), 10.0);
  // Three arms of a corner: 3*4 - 3*1 + 1 = 10.
  EXPECT_DOUBLE_EQ(hypervolume({{4, 1, 1}, {1, 4, 1}, {1, 1, 4}}, {0, 0, 0}), 10.0);
}

TEST(Nsga2Hypervolume, PointsNotAboveTheReferenceIgnored) {
  // (5,0) and (0,5) touch the reference: empty boxes; (-1,-1) is below it.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 3}, {5, 0}, {2, 2}, {0, 5}, {3, 1}, {-1, -1}}, {0, 0}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({{2, 3, 4}, {9, 9, -1}, {9, -9, 9}}, {0, 0, 0}), 24.0);
  EXPECT_DOUBLE_EQ(hypervolume({{-1, -1, -1}}, {0, 0, 0}), 0.0);
}

TEST(Nsga2Hypervolume, DimensionMismatchThrows) {
  EXPECT_THROW(hypervolume({{1, 2, 3}}, {0, 0}), std::invalid_argument);
  // Even a point that would be ignored for lying below the reference.
  EXPECT_THROW(hypervolume({{1, 1}, {-1}}, {0, 0}), std::invalid_argument);
  EXPECT_THROW(hypervolume({}, {}), std::invalid_argument);
}

// The union volume by coordinate compression, independent of the library's
// sweep and slicing: cut every axis at the reference and at every point's
// coordinate above it; a cell of that grid is covered iff some point is >= its
// upper corner everywhere (a point at or below the reference in some axis
// never is, since every cell's upper corner lies above the reference).
double union_volume_by_cells(const Points& points, const std::vector<double>& reference) {
  const std::size_t dims = reference.size();
  std::vector<std::vector<double>> cuts(dims);
  for (std::size_t k = 0; k < dims; ++k) {
    cuts[k].push_back(reference[k]);
    for (const auto& p : points) {
      if (p[k] > reference[k]) cuts[k].push_back(p[k]);
    }
    std::sort(cuts[k].begin(), cuts[k].end());
    cuts[k].erase(std::unique(cuts[k].begin(), cuts[k].end()), cuts[k].end());
    if (cuts[k].size() < 2) return 0;
  }
  std::vector<std::size_t> cell(dims, 0);
  double total = 0;
  for (;;) {
    const bool covered = std::any_of(points.begin(), points.end(), [&](const std::vector<double>& p) {
      for (std::size_t k = 0; k < dims; ++k) {
        if (p[k] < cuts[k][cell[k] + 1]) return false;
      }
      return true;
    });
    if (covered) {
      double v = 1;
      for (std::size_t k = 0; k < dims; ++k) v *= cuts[k][cell[k] + 1] - cuts[k][cell[k]];
      total += v;
    }
    std::size_t k = 0;  // odometer over the cells
    while (k < dims && ++cell[k] == cuts[k].size() - 1) cell[k++] = 0;
    if (k == dims) return total;
  }
}

TEST(Nsga2Hypervolume, CellCountingAgreesOnHandCases) {
  // The reference method itself, on the hand-computed cases above.
  EXPECT_DOUBLE_EQ(union_volume_by_cells({{1, 3}, {2, 2}, {3, 1}}, {0, 0}), 6.0);
  EXPECT_DOUBLE_EQ(union_volume_by_cells({{4, 1, 1}, {1, 4, 1}, {1, 1, 4}}, {0, 0, 0}), 10.0);
}

Points random_points(std::mt19937& rng, std::size_t count, std::size_t dims, bool integral) {
  std::uniform_int_distribution<int> small(-1, 8);  // ties galore, some below the reference
  std::uniform_real_distribution<double> real(-0.5, 4.0);
  Points points(count, std::vector<double>(dims));
  for (auto& p : points) {
    for (double& x : p) x = integral ? small(rng) : real(rng);
  }
  return points;
}

// Integral coordinates keep every partial sum exact, so both methods must
// agree to the last bit (DOUBLE_EQ); real ones to rounding.
void check_against_cells(std::size_t dims, std::size_t max_points, int trials, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> count(1, max_points);
  for (int t = 0; t < trials; ++t) {
    const bool integral = t % 2 == 0;
    const Points points = random_points(rng, count(rng), dims, integral);
    const std::vector<double> reference(dims, integral ? 0.0 : 0.25);
    const double expected = union_volume_by_cells(points, reference);
    const double actual = hypervolume(points, reference);
    if (integral) {
      EXPECT_DOUBLE_EQ(actual, expected) << "d = " << dims << ", trial " << t;
    } else {
      EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, expected)) << "d = " << dims << ", trial " << t;
    }
  }
}

TEST(Nsga2Hypervolume, RandomSetsMatchCellCounting) {
  check_against_cells(1, 10, 20, 11);
  check_against_cells(2, 30, 40, 12);
  check_against_cells(3, 25, 40, 13);
  check_against_cells(4, 12, 30, 14);
  check_against_cells(5, 8, 20, 15);
}

// The slicing axis is the last objective: reordering the objectives must not
// change the volume (a bug in the slab heights or in the recursion would).
TEST(Nsga2Hypervolume, InvariantUnderObjectiveOrder) {
  std::mt19937 rng(21);
  for (int t = 0; t < 20; ++t) {
    const Points points = random_points(rng, 15, 4, true);
    const double base = hypervolume(points, {0, 0, 0, 0});
    std::vector<std::size_t> order{0, 1, 2, 3};
    while (std::next_permutation(order.begin(), order.end())) {
      Points permuted;
      for (const auto& p : points) permuted.push_back({p[order[0]], p[order[1]], p[order[2]], p[order[3]]});
      EXPECT_DOUBLE_EQ(hypervolume(permuted, {0, 0, 0, 0}), base);
    }
  }
}

TEST(Nsga2Hypervolume, FewHundredPointsIn3D) {
  // A front's worth of points on the sphere x² + y² + z² = 1 (all
  // non-dominated: the worst case for slicing). Every box lies inside the
  // octant of the unit ball (volume pi/6), and adding points never loses
  // volume, so 300 points hold at least what their first 40 do — which cell
  // counting (41³ cells) can still check exactly.
  std::mt19937 rng(5);
  std::normal_distribution<double> gauss;
  Points points;
  while (points.size() < 300) {
    const double x = std::abs(gauss(rng)), y = std::abs(gauss(rng)), z = std::abs(gauss(rng));
    const double r = std::sqrt(x * x + y * y + z * z);
    if (r > 0) points.push_back({x / r, y / r, z / r});
  }
  const Points first40(points.begin(), points.begin() + 40);
  const double some = hypervolume(first40, {0, 0, 0});
  EXPECT_NEAR(some, union_volume_by_cells(first40, {0, 0, 0}), 1e-12);
  const double all = hypervolume(points, {0, 0, 0});
  EXPECT_GT(all, some);
  EXPECT_LT(all, std::acos(-1.0) / 6);
}

}  // namespace
