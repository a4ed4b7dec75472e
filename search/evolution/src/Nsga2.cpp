// NSGA-II (Deb et al. 2002) with constrained domination, and the exact
// hypervolume of a front; see mixtd/search/Nsga2.h.
#include "mixtd/search/Nsga2.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mixtd::search {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Violation is documented as >= 0; anything not positive counts as feasible
// so that a caller's -0.0 or rounding below zero does not make a point
// infeasible.
bool feasible(const ObjectivePoint& p) { return !(p.violation > 0); }

std::size_t objective_count(const std::vector<ObjectivePoint>& points, const std::vector<std::size_t>& front) {
  const std::size_t dims = points.at(front.front()).objectives.size();
  for (std::size_t i : front) {
    if (points.at(i).objectives.size() != dims) {
      throw std::invalid_argument("crowding_distance: point " + std::to_string(i) + " has " +
                                  std::to_string(points[i].objectives.size()) + " objectives, expected " +
                                  std::to_string(dims));
    }
  }
  return dims;
}

// Adds objective m's share to `distance` (indexed like `front`).
void add_crowding_of_objective(const std::vector<ObjectivePoint>& points, const std::vector<std::size_t>& front,
                               std::size_t m, std::vector<double>& distance) {
  const auto value = [&](std::size_t pos) { return points[front[pos]].objectives[m]; };
  std::vector<std::size_t> order(front.size());  // positions into `front`
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Ties by point index: equal values would otherwise leave which point is the
  // boundary (and gets +infinity) to the sort's whim.
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (value(x) != value(y)) return value(x) < value(y);
    return front[x] < front[y];
  });
  distance[order.front()] = kInfinity;
  distance[order.back()] = kInfinity;
  const double range = value(order.back()) - value(order.front());
  if (!(range > 0)) return;  // a flat objective separates nobody
  for (std::size_t k = 1; k + 1 < order.size(); ++k) {
    distance[order[k]] += (value(order[k + 1]) - value(order[k - 1])) / range;
  }
}

// The `count` members of `front` with the largest crowding distance, largest
// first (ties: lower index first).
std::vector<std::size_t> most_spread(const std::vector<ObjectivePoint>& points, const std::vector<std::size_t>& front,
                                     std::size_t count) {
  const std::vector<double> distance = crowding_distance(points, front);
  std::vector<std::size_t> order(front.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (distance[x] != distance[y]) return distance[x] > distance[y];
    return front[x] < front[y];
  });
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < count; ++k) chosen.push_back(front[order[k]]);
  return chosen;
}

using Point = std::vector<double>;

double volume(std::vector<Point> points, std::size_t dims);

// d = 2 with the reference at the origin: walk the points by the first
// objective descending; each point that rises above the highest second
// objective seen adds the strip between the two, as wide as the point.
double area(std::vector<Point> points) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a[0] != b[0]) return a[0] > b[0];
    return a[1] > b[1];
  });
  double top = 0;
  double total = 0;
  for (const Point& p : points) {
    if (p[1] <= top) continue;  // inside what earlier (wider) points cover
    total += p[0] * (p[1] - top);
    top = p[1];
  }
  return total;
}

bool weakly_dominates(const Point& a, const Point& b, std::size_t dims) {
  for (std::size_t k = 0; k < dims; ++k) {
    if (a[k] < b[k]) return false;
  }
  return true;
}

// Keeps `slice` mutually non-dominated as points are added: a dominated point
// adds nothing to any later slice either, and dropping it keeps the recursion
// on the slices small.
void add_to_slice(std::vector<Point>& slice, Point p, std::size_t dims) {
  for (const Point& s : slice) {
    if (weakly_dominates(s, p, dims)) return;
  }
  std::erase_if(slice, [&](const Point& s) { return weakly_dominates(p, s, dims); });
  slice.push_back(std::move(p));
}

// d >= 3 with the reference at the origin (HSO): between two consecutive
// values of the last objective the cross-section is the (d-1)-dimensional
// union of the points at or above the upper value; sum slab height times that.
double sliced_volume(std::vector<Point> points, std::size_t dims) {
  const std::size_t last = dims - 1;
  std::sort(points.begin(), points.end(), [&](const Point& a, const Point& b) { return a[last] > b[last]; });
  std::vector<Point> slice;
  double total = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    add_to_slice(slice, Point(points[i].begin(), points[i].begin() + last), last);
    const double upper = points[i][last];
    const double lower = i + 1 < points.size() ? points[i + 1][last] : 0.0;
    if (upper > lower) total += volume(slice, last) * (upper - lower);
  }
  return total;
}

// Union volume of the boxes [0, p] over `points`, all of whose first `dims`
// coordinates are > 0.
double volume(std::vector<Point> points, std::size_t dims) {
  if (points.empty()) return 0;
  if (dims == 1) {
    double best = 0;
    for (const Point& p : points) best = std::max(best, p[0]);
    return best;
  }
  if (dims == 2) return area(std::move(points));
  return sliced_volume(std::move(points), dims);
}

}  // namespace

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) {
    throw std::invalid_argument("dominates: " + std::to_string(a.size()) + " objectives against " +
                                std::to_string(b.size()));
  }
  bool better_somewhere = false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] < b[k]) return false;
    if (a[k] > b[k]) better_somewhere = true;
  }
  return better_somewhere;
}

bool constrained_dominates(const ObjectivePoint& a, const ObjectivePoint& b) {
  const bool a_ok = feasible(a);
  const bool b_ok = feasible(b);
  if (a_ok && b_ok) return dominates(a.objectives, b.objectives);
  if (a_ok != b_ok) return a_ok;
  return a.violation < b.violation;
}

std::vector<std::vector<std::size_t>> non_dominated_sort(const std::vector<ObjectivePoint>& points) {
  const std::size_t n = points.size();
  std::vector<std::vector<std::size_t>> beats(n);  // whom each point dominates
  std::vector<std::size_t> beaten_by(n, 0);        // how many dominate each point
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (constrained_dominates(points[i], points[j])) {
        beats[i].push_back(j);
        ++beaten_by[j];
      } else if (constrained_dominates(points[j], points[i])) {
        beats[j].push_back(i);
        ++beaten_by[i];
      }
    }
  }
  std::vector<std::vector<std::size_t>> fronts;
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i) {
    if (beaten_by[i] == 0) current.push_back(i);
  }
  // Peeling a front releases those it alone still held back.
  while (!current.empty()) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      for (std::size_t j : beats[i]) {
        if (--beaten_by[j] == 0) next.push_back(j);
      }
    }
    std::sort(next.begin(), next.end());
    fronts.push_back(std::move(current));
    current = std::move(next);
  }
  return fronts;
}

std::vector<double> crowding_distance(const std::vector<ObjectivePoint>& points,
                                      const std::vector<std::size_t>& front) {
  if (front.size() <= 2) return std::vector<double>(front.size(), kInfinity);
  const std::size_t dims = objective_count(points, front);
  std::vector<double> distance(front.size(), 0.0);
  for (std::size_t m = 0; m < dims; ++m) add_crowding_of_objective(points, front, m, distance);
  return distance;
}

std::vector<std::size_t> nsga2_select(const std::vector<ObjectivePoint>& points, std::size_t keep) {
  std::vector<std::size_t> chosen;
  for (const std::vector<std::size_t>& front : non_dominated_sort(points)) {
    const std::size_t room = keep - chosen.size();
    if (room == 0) break;
    if (front.size() <= room) {
      chosen.insert(chosen.end(), front.begin(), front.end());
      continue;
    }
    const std::vector<std::size_t> cut = most_spread(points, front, room);
    chosen.insert(chosen.end(), cut.begin(), cut.end());
    break;
  }
  return chosen;
}

RankCrowding rank_and_crowding(const std::vector<ObjectivePoint>& points) {
  RankCrowding rc;
  rc.rank.assign(points.size(), 0);
  rc.crowding.assign(points.size(), 0.0);
  const auto fronts = non_dominated_sort(points);
  for (std::size_t r = 0; r < fronts.size(); ++r) {
    const std::vector<double> distance = crowding_distance(points, fronts[r]);
    for (std::size_t k = 0; k < fronts[r].size(); ++k) {
      rc.rank[fronts[r][k]] = r;
      rc.crowding[fronts[r][k]] = distance[k];
    }
  }
  return rc;
}

bool crowded_less(const RankCrowding& rc, std::size_t a, std::size_t b) {
  if (rc.rank.at(a) != rc.rank.at(b)) return rc.rank[a] < rc.rank[b];
  return rc.crowding.at(a) > rc.crowding.at(b);
}

double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& reference) {
  const std::size_t dims = reference.size();
  if (dims == 0) throw std::invalid_argument("hypervolume: the reference has no objectives");
  std::vector<Point> shifted;  // relative to the reference, so the algorithms work from the origin
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (p.size() != dims) {
      throw std::invalid_argument("hypervolume: point " + std::to_string(i) + " has " + std::to_string(p.size()) +
                                  " objectives, the reference " + std::to_string(dims));
    }
    Point q(dims);
    bool above = true;
    for (std::size_t k = 0; k < dims && above; ++k) {
      above = p[k] > reference[k];  // also drops NaN coordinates
      q[k] = p[k] - reference[k];
    }
    if (above) shifted.push_back(std::move(q));
  }
  return volume(std::move(shifted), dims);
}

}  // namespace mixtd::search
