// How the default solver prices a step (private to mixtd::search): each
// resource at one over what is left of it, so a step that spends the
// scarcest resource costs most; a move's worth is its gain per priced cost
// (Balancer.h; docs/solver.md "solve()").
#pragma once

#include <algorithm>

#include "Evaluator.h"
#include "StageOptions.h"
#include "mixtd/arch/Resources.h"

namespace mixtd::search::detail {

// A number larger than any gain per cost, for moves that add nothing.
inline constexpr double kFree = 1e30;

// (Free moves rank among themselves by gain; 1e30 + gain would round it away.)
inline double ratio(double gain, double added) { return added <= 0 ? kFree * (1 + 1e-12 * gain) : gain / added; }

// Whether ratio(gain, added) > best, for gain > 0 and best > 0, mostly
// without the division: where gain is clearly above or below best · added
// (a relative margin of 1e-15, far beyond the roundings of the product and
// of the quotient) the answer is the same as the quotient's, and only the
// rare close call divides.
inline bool ratio_above(double gain, double added, double best) {
  if (added <= 0) return ratio(gain, added) > best;
  const double product = best * added;
  if (gain > product * (1 + 1e-15)) return true;
  if (gain < product * (1 - 1e-15)) return false;
  return gain / added > best;
}

// Price of each resource: one over what is left of it.
inline arch::Resources prices(const Evaluator& ev) {
  const arch::Resources& b = ev.budget();
  const arch::Resources& t = ev.total();
  auto price = [](double budget, double used) {
    if (budget <= 0) return 1e12;
    return 1.0 / std::max(budget - used, 1e-3 * budget);
  };
  return {price(b.dsp, t.dsp), price(b.bram18, t.bram18), price(b.uram, t.uram), price(b.lut, t.lut),
          price(b.ff, t.ff)};
}

inline double priced(const arch::Resources& r, const arch::Resources& p) {
  return r.dsp * p.dsp + r.bram18 * p.bram18 + r.uram * p.uram + r.lut * p.lut + r.ff * p.ff;
}

// What stage s holds now: its instances and its output FIFOs.
inline arch::Resources held(const Evaluator& ev, int s) {
  const int m = ev.slot(s).module;
  arch::Resources r = ev.module_resources(m);
  for (int st : ev.module_outputs(m)) r += ev.stream_resources(st);
  return r;
}

// Pricing the options of one stage against the current design: added cost
// of moving there (counting what the stage holds), and whether it would
// fit (blocks after a wider output, and skip FIFOs, are left to the full
// evaluation).
struct Scan {
  arch::Resources price, room;
  double held = 0;
  double added(const Option& o) const { return priced(o.res, price) - held; }
  // What the URAM placement costs more than the BRAM18 one.
  double uram_extra(const Option& o) const { return o.weight_uram * price.uram - o.weight_bram18 * price.bram18; }
  double added(const Option& o, bool uram) const { return uram ? added(o) + uram_extra(o) : added(o); }
  bool fits(const Option& o, bool uram) const {
    if (!uram) return o.res.fits(room);
    return o.res.dsp <= room.dsp && o.res.bram18 - o.weight_bram18 <= room.bram18 &&
           o.res.uram + o.weight_uram <= room.uram && o.res.lut <= room.lut && o.res.ff <= room.ff;
  }
};

inline Scan scan(const Evaluator& ev, int s, const arch::Resources& price) {
  const arch::Resources h = held(ev, s);
  Scan sc;
  sc.price = price;
  sc.held = priced(h, price);
  sc.room = ev.budget() + h + ev.total().scaled(-1.0);
  return sc;
}

// Calls f(base, uram) for each placement of o: BRAM18 (or the only one)
// first, then URAM where the memory is a choice; `base` is added(o).
template <typename F>
void for_each_placement(const Scan& sc, const Option& o, F f) {
  const double base = sc.added(o);
  f(base, false);
  if (o.memory_choice) f(base + sc.uram_extra(o), true);
}

// Whether every option from bound b on costs more than `cost` under sc:
// the bound's price is below each of theirs in exact arithmetic (prices
// are positive), and the margin is far beyond the roundings of either.
inline bool costs_more(const Scan& sc, const Bound& b, double cost) {
  const double least = priced(b.least, sc.price);
  return least - sc.held > cost + 1e-9 * (least + sc.held);
}

// Whether no option from bound b on has a ratio above `best` if none
// gains more than `gain`: all of them then cost more than
// gain / best (a margin again beyond the roundings).
inline bool beats_nothing(const Scan& sc, const Bound& b, double gain, double best) {
  const double least = priced(b.least, sc.price), margin = 1e-9 * (least + sc.held);
  const double added = least - sc.held - margin;
  return added > 0 && best > 0 && gain / added < best * (1 - 1e-9);
}

}  // namespace mixtd::search::detail
