// The batch-1 latency greedy: interval, row, fill and widening moves ranked
// by latency drop per priced resource, measured lazily (Balancer.h).
#include <algorithm>
#include <map>
#include <queue>
#include <vector>

#include "Balancer.h"

namespace mixtd::search::detail {

// The Fill or Widen change an entry proposes on the current design, into
// `out` (its buffer reused: this runs for every measurement); empty if
// none.
void Balancer::propose(const Entry& e, Change& out) {
  out.clear();
  const arch::Resources p = prices();
  const std::int64_t interval = ev_.interval();
  const int s = e.stage;
  const std::int64_t width = ev_.module_width_out(ev_.slot(s).module);
  const std::int64_t own = own_fill(s);
  const auto& opts = options(s);
  Pick best;
  double best_ratio = 0;
  const Scan sc = scan(s, p);
  auto consider = [&](std::size_t i, double gain) {
    if (gain <= 0) return;
    for_each_placement(sc, opts[i], [&](double added, bool uram) {
      if ((best.none() || ratio_above(gain, added, best_ratio)) && sc.fits(opts[i], uram)) {
        best = {static_cast<int>(i), uram};
        best_ratio = ratio(gain, added);
      }
    });
  };
  if (e.kind == Kind::Widen) {
    const bool on_path = fill_path()[static_cast<std::size_t>(s)];
    for (std::size_t i = first_faster(s, interval + 1); i < opts.size(); ++i) {
      const Option& o = opts[i];
      if (o.width <= width || o.interval > interval) continue;
      consider(i, widen_gain(e.module, s, o, own, on_path));
    }
    if (!best.none()) out.emplace_back(s, psi_of(s, best));
    return;
  }
  const Table& tb = table(s);
  const std::size_t begin = first_faster(s, interval + 1);
  for (std::size_t i = begin; i < opts.size(); ++i) {
    // Nothing from here on can do better: no fill below own, or (every
    // few options) no ratio above the best even at the most gain for the
    // least cost.
    if ((i - begin) % 8 == 0) {
      const Bound& b = tb.from[i];
      if (b.fill >= own) break;
      if (!best.none() && beats_nothing(sc, b, static_cast<double>(own - b.fill), best_ratio)) break;
    }
    const Option& o = opts[i];
    if (o.fill >= own || o.interval > interval || (e.kind == Kind::FillKeepWidth && o.width < width)) continue;
    consider(i, static_cast<double>(own - o.fill));
  }
  if (!best.none()) out.emplace_back(s, psi_of(s, best));
}

// Estimated latency drop if stage s moves to option o to widen pool m:
// the pool's shorter fill, less any fill the stage itself gains (if it is
// on the fill path).
double Balancer::widen_gain(int m, int s, const Option& o, std::int64_t own, bool on_path) {
  const std::int64_t pool = ev_.pool_fill_at(m, ev_.module_width_in(m)) - pool_fill_if(m, s, o.width);
  return static_cast<double>(pool + (on_path ? own - o.fill : 0));
}

// Pool m's fill if stage s's output were w wide, memoised while the
// design does not change (many options share a width).
std::int64_t Balancer::pool_fill_if(int m, int s, std::int64_t w) {
  // A direct-mapped table stamped with the evaluation count: no
  // allocation, and a change of design empties it at once.
  const auto key =
      (static_cast<std::uint64_t>(m) << 44) ^ (static_cast<std::uint64_t>(s) << 24) ^ static_cast<std::uint64_t>(w);
  Memo& slot = memo_[(key * 0x9e3779b97f4a7c15ULL) >> (64 - kMemoBits)];
  if (slot.stamp != ev_.evaluations() || slot.key != key) {
    slot = {key, ev_.evaluations(), ev_.pool_fill_at(m, ev_.width_in_if(m, s, w))};
  }
  return slot.value;
}

// Which stages are on the longest fill path, recomputed when the design
// has changed.
const std::vector<char>& Balancer::fill_path() {
  if (path_stamp_ != ev_.evaluations()) {
    path_ = on_fill_path();
    path_stamp_ = ev_.evaluations();
  }
  return path_;
}

// Re-measures an entry on the current design: its change and its true
// latency drop per added resource (0 if it does not fit or gains nothing).
// A Fill or Widen change worth at least `take_at` (and more than 0) is
// kept at once, saving its re-evaluation: returns whether it was.
bool Balancer::measure(Entry& e, double take_at) {
  e.epoch = epoch_;
  e.ratio = 0;
  e.change.clear();
  const std::int64_t latency = ev_.latency_cycles(), interval = ev_.interval();
  const arch::Resources p = prices();
  const double base = priced(ev_.total(), p);
  // The gain ratio of a design state (of the evaluator now, or one
  // recorded in the level chain).
  auto ratio_of = [&](bool fits, std::int64_t iv, std::int64_t lat, const arch::Resources& total) {
    if (!fits || iv > interval || lat >= latency) return 0.0;
    return ratio(static_cast<double>(latency - lat), priced(total, p) - base);
  };
  auto gain_ratio = [&] { return ratio_of(ev_.fits(), ev_.interval(), ev_.latency_cycles(), ev_.total()); };
  if (e.kind == Kind::Level) {
    ev_.begin_trial();
    measure_level(e, interval, ratio_of);
    ev_.rollback();
    return false;
  }
  if (e.kind == Kind::Rows) {
    ev_.begin_trial();
    measure_rows(e, ratio_of);
    ev_.rollback();
    return false;
  }
  auto worth_taking = [&](double r) { return r > 0 && r >= take_at; };
  propose(e, e.change);
  if (e.change.empty()) return false;
  // A narrower output may slow or lengthen what follows: then the best
  // change that keeps the width may be worth more.
  const bool narrower = e.kind == Kind::Fill &&
                        ev_.module_width_out(ev_.slot(e.stage).module) > e.change[0].second.p_out &&
                        !ev_.slot(e.stage).depthwise();
  ev_.begin_trial();
  apply(e.change);
  e.ratio = gain_ratio();
  if (!narrower && worth_taking(e.ratio)) {
    ev_.commit();
    return true;
  }
  ev_.rollback();
  if (!narrower) return false;
  Entry& keep = keep_;
  keep.kind = Kind::FillKeepWidth;
  keep.stage = e.stage;
  keep.module = e.module;
  propose(keep, keep.change);
  if (keep.change.empty()) return false;
  ev_.begin_trial();
  apply(keep.change);
  const double r = gain_ratio();
  if (r > e.ratio) {
    e.ratio = r;
    std::swap(e.change, keep.change);
    if (worth_taking(r)) {
      ev_.commit();
      return true;
    }
  }
  ev_.rollback();
  return false;
}

template <typename RatioOf>
void Balancer::measure_level(Entry& e, std::int64_t interval, RatioOf ratio_of) {
  LevelChain& c = level_;
  if (!c.valid) {
    c = LevelChain{};
    c.valid = true;
  }
  const auto reach = static_cast<std::int64_t>(static_cast<double>(interval) * (1.0 - kLevelReach));
  std::size_t best_end = c.taken;
  auto value = [&](const LevelStep& st) {
    const double r = ratio_of(st.fits, st.interval, st.latency, st.total);
    if (r > e.ratio) {
      e.ratio = r;
      best_end = st.end;
    }
  };
  // The recorded steps after what the design took: balancing from here
  // takes them again, while the interval before each is above the reach.
  std::size_t k = 0;
  while (k < c.steps.size() && c.steps[k].end <= c.taken) ++k;
  std::int64_t before = ev_.interval();
  bool stopped = false;
  for (; k < c.steps.size(); ++k) {
    if (before <= reach) {
      stopped = true;
      break;
    }
    value(c.steps[k]);
    before = c.steps[k].interval;
  }
  if (!stopped && !c.saturated && before > reach) {
    // Balance further from the last recorded state.
    if (c.journal.size() > c.taken)
      apply(Change(c.journal.begin() + static_cast<std::ptrdiff_t>(c.taken), c.journal.end()));
    journal_ = &c.journal;
    while (ev_.interval() > reach) {
      if (!improve(ev_.bottleneck())) {
        c.saturated = true;
        break;
      }
      c.steps.push_back({c.journal.size(), ev_.fits(), ev_.interval(), ev_.latency_cycles(), ev_.total()});
      value(c.steps.back());
    }
    journal_ = nullptr;
  }
  e.change.assign(c.journal.begin() + static_cast<std::ptrdiff_t>(c.taken),
                  c.journal.begin() + static_cast<std::ptrdiff_t>(best_end));
}

// Rows moves: the stages whose output has the same number of rows (one
// resolution of the network) lag behind their input by about a row at
// their own pace each, interval / rows, so at batch 1 the late,
// low-resolution stages are worth more per DSP than the interval
// balancing gives them; and two stages in a chain at the same pace gain
// nothing from one of them alone. So: balance the group's slowest stage
// step by step towards kLevelReach below the group's slowest interval,
// and take the prefix of steps worth most.
template <typename RatioOf>
void Balancer::measure_rows(Entry& e, RatioOf ratio_of) {
  const std::vector<int>& group = row_groups_[static_cast<std::size_t>(e.module)];
  auto slowest = [&] {
    int best = -1;
    std::int64_t iv = -1;
    for (int s : group) {
      const std::int64_t v = ev_.module_interval(ev_.slot(s).module);
      if (v > iv) best = s, iv = v;
    }
    return std::pair{best, iv};
  };
  const auto reach = static_cast<std::int64_t>(static_cast<double>(slowest().second) * (1.0 - kLevelReach));
  Change journal;
  journal_ = &journal;
  std::size_t best_end = 0;
  for (int step = 0; step < kRowsSteps; ++step) {
    const auto [s, iv] = slowest();
    if (s < 0 || iv <= reach || !improve_stage(s)) break;
    const double r = ratio_of(ev_.fits(), ev_.interval(), ev_.latency_cycles(), ev_.total());
    if (r > e.ratio) {
      e.ratio = r;
      best_end = journal.size();
    }
  }
  journal_ = nullptr;
  e.change.assign(journal.begin(), journal.begin() + static_cast<std::ptrdiff_t>(best_end));
}

void Balancer::balance_latency() {
  level_.valid = false;
  std::vector<Entry> entries;
  auto add = [&](Kind k, int s, int m) {
    Entry e;
    e.ratio = 2 * kFree;  // unmeasured: look at it first
    e.kind = k;
    e.stage = s;
    e.module = m;
    entries.push_back(std::move(e));
  };
  add(Kind::Level, -1, -1);
  if (row_groups_.empty()) {
    std::map<std::int64_t, std::vector<int>> by_rows;
    for (int s = 0; s < ev_.stage_count(); ++s) by_rows[ev_.slot(s).shape.out.h].push_back(s);
    for (auto& [rows, stages] : by_rows)
      if (stages.size() > 1) row_groups_.push_back(std::move(stages));
  }
  for (int g = 0; g < static_cast<int>(row_groups_.size()); ++g) add(Kind::Rows, -1, g);
  for (int s = 0; s < ev_.stage_count(); ++s) add(Kind::Fill, s, ev_.slot(s).module);
  for (int m = 0; m < ev_.module_count(); ++m)
    if (width_sets_fill(ev_.module_kind(m)))
      for (int s : ev_.width_sources(m)) add(Kind::Widen, s, m);
  std::priority_queue<Key> queue;
  auto push = [&](int i) {
    const Entry& e = entries[static_cast<std::size_t>(i)];
    queue.push({e.ratio, static_cast<int>(e.kind), e.stage, i});
  };
  for (int i = 0; i < static_cast<int>(entries.size()); ++i) push(i);
  while (!queue.empty()) {
    const int i = queue.top().index;
    queue.pop();
    Entry& e = entries[static_cast<std::size_t>(i)];
    if (e.epoch != epoch_) {
      // An estimate: measure it now. Taken at once if it is still within
      // kTakeWithin of the best estimate left (the greedy's answers are
      // the same within 0.1% on every bench design, with a fifth fewer
      // measurements on CPD), else queued again.
      const double take_at = queue.empty() ? 0 : (1 - kTakeWithin) * queue.top().ratio;
      const bool applied = measure(e, take_at);
      if (!applied && !(e.ratio > 0 && e.ratio >= take_at)) {
        push(i);
        continue;
      }
      if (!applied) apply(e.change);
    } else {
      if (e.ratio <= 0) break;  // the best move there is gains nothing
      apply(e.change);
    }
    if (e.kind == Kind::Level) {
      level_.taken += e.change.size();
    } else {
      level_.valid = false;
    }
    ++epoch_;
    e.change.clear();
    push(i);  // its stage's (or the level's) next move, ratio as the estimate
  }
}

}  // namespace mixtd::search::detail
