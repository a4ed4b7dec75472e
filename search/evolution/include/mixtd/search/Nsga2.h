// NSGA-II's selection machinery (Deb, Pratap, Agarwal & Meyarivan, "A fast
// and elitist multiobjective genetic algorithm: NSGA-II", IEEE TEC 6(2),
// 2002), used by `mixtd search --pareto`: Pareto dominance, Deb's
// constrained domination (the paper's §VI feasibility rules), fast
// non-dominated sorting, crowding distance, survivor selection, the crowded
// comparison for binary tournaments — and the exact hypervolume that scores
// the front a run ends with.
//
// Everything here works on plain objective vectors so that it stays free of
// the rest of the project (std only) and can be tested by hand.
#pragma once

#include <cstddef>
#include <vector>

namespace mixtd::search {

// All objectives are MAXIMISED (a caller negates what it minimises).
// violation >= 0 is the summed, normalised constraint violation; 0 = feasible.
struct ObjectivePoint {
  std::vector<double> objectives;
  double violation = 0;
};

// Pareto dominance on objectives only: a >= b everywhere and > somewhere.
// Throws std::invalid_argument if a and b differ in dimension.
bool dominates(const std::vector<double>& a, const std::vector<double>& b);

// Deb's constrained domination (feasibility rules): a feasible point dominates
// an infeasible one; of two infeasible points the smaller violation dominates;
// two feasible points compare by dominates().
bool constrained_dominates(const ObjectivePoint& a, const ObjectivePoint& b);

// Fast non-dominated sort under constrained domination: fronts of indices,
// front 0 first; within a front indices ascending. Infeasible points land
// after every feasible front, one front per distinct violation.
std::vector<std::vector<std::size_t>> non_dominated_sort(const std::vector<ObjectivePoint>& points);

// Crowding distance of each point of `front` (result in the order of
// `front`): boundary points of every objective get +infinity; interior points
// the sum over objectives of (next - previous) / (max - min) of that objective
// within the front (an objective with max == min contributes 0). Sorting ties
// broken by index so the result is deterministic. Fronts of 1 or 2 points:
// all +infinity.
std::vector<double> crowding_distance(const std::vector<ObjectivePoint>& points, const std::vector<std::size_t>& front);

// NSGA-II survivor selection: `keep` indices taken front by front; the front
// that does not fit whole is cut by crowding distance descending (ties: lower
// index first). Returned in selection order. keep > size: all.
std::vector<std::size_t> nsga2_select(const std::vector<ObjectivePoint>& points, std::size_t keep);

// Rank (front number) and crowding distance of every point, indexed like
// `points`: what the crowded-comparison operator reads.
struct RankCrowding {
  std::vector<std::size_t> rank;
  std::vector<double> crowding;
};
RankCrowding rank_and_crowding(const std::vector<ObjectivePoint>& points);

// Crowded-comparison operator (for binary tournaments): true if a is better
// than b — lower rank wins, then larger crowding distance.
bool crowded_less(const RankCrowding& rc, std::size_t a, std::size_t b);

// Hypervolume (maximisation) of the region dominated by `points` and bounded
// below by `reference`: volume of the union over points p of the boxes
// [reference, p]. Points not strictly greater than the reference in every
// objective contribute nothing. Exact for any dimension d >= 1 (d = 1 a
// maximum, d = 2 a sweep, d >= 3 slices along the last objective, recursing
// on the slices — HSO). Duplicates and dominated points allowed. Throws
// std::invalid_argument if the reference is empty or a point's dimension
// differs from the reference's.
double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& reference);

}  // namespace mixtd::search
