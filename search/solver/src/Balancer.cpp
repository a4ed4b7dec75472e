#include "Balancer.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "Common.h"
#include "mixtd/arch/Resources.h"

namespace mixtd::search::detail {

namespace {

// One legal unrolling of a stage and what it gives on its own: cycles,
// output width, resources of all its instances and of its output FIFOs.
// Where the weight memory is a choice (block RAM on a device with URAM) the
// option has two placements, weights in BRAM18 (`res`) or in URAM
// (`in_uram()`), and the prices decide between them at every scan, as
// between unrollings. (One option with two placements rather than two
// options: the scans, the solver's main cost, stay half as long.)
// (What every scan reads comes first, in one cache line.)
struct alignas(64) Option {
  std::int64_t interval = 0, fill = 0, width = 0;
  arch::Resources res;
  bool memory_choice = false;
  double weight_bram18 = 0;  // of res, the weights' (all instances)
  double weight_uram = 0;    // the same weights in URAM
  arch::Psi psi;             // weight_memory: Bram where it is a choice, else Auto
  arch::Resources in_uram() const {
    arch::Resources r = res;
    r.bram18 -= weight_bram18;
    r.uram += weight_uram;
    return r;
  }
};

// An option of a stage with its placement: the unit every scan picks.
struct Pick {
  int option = -1;  // -1: none
  bool uram = false;
  bool operator==(const Pick&) const = default;
  bool none() const { return option < 0; }
};

// A set of ψ changes made together.
using Change = std::vector<std::pair<int, arch::Psi>>;

// A number larger than any gain per cost, for moves that add nothing.
constexpr double kFree = 1e30;

// (Free moves rank among themselves by gain; 1e30 + gain would round it away.)
double ratio(double gain, double added) { return added <= 0 ? kFree * (1 + 1e-12 * gain) : gain / added; }

// Whether ratio(gain, added) > best, for gain > 0 and best > 0, mostly
// without the division: where gain is clearly above or below best · added
// (a relative margin of 1e-15, far beyond the roundings of the product and
// of the quotient) the answer is the same as the quotient's, and only the
// rare close call divides.
bool ratio_above(double gain, double added, double best) {
  if (added <= 0) return ratio(gain, added) > best;
  const double product = best * added;
  if (gain > product * (1 + 1e-15)) return true;
  if (gain < product * (1 - 1e-15)) return false;
  return gain / added > best;
}

class Balancer {
 public:
  // `early_start`: also run the latency greedy from early in the interval
  // balancing (run()); balance() asks for it at the full budget only.
  // `starts`, if given, gets a record per start run() makes (batch-1
  // latency; a narrow start's is its caller's to make).
  Balancer(Evaluator& ev, Objective objective, bool early_start = true, std::vector<SolveStart>* starts = nullptr)
      : ev_(ev),
        objective_(objective),
        early_start_(early_start),
        starts_(starts),
        tables_of_(static_cast<std::size_t>(ev.stage_count())) {}

  void run() {
    if (objective_ == Objective::Throughput) {
      balance_interval();
      refine();
      return;
    }
    // Two starts, the better kept: the interval balanced first, then the
    // latency greedy from there; and the latency greedy from early in that
    // balancing (the first state whose interval is within kEarlyStart of the
    // balanced one), which trades interval for fill sooner. Each wins on
    // some networks and budgets (the second can stop at a higher interval
    // than the budget allows, the first spends on the interval what fill
    // would have used better). (The second once started from ψ = 1: the
    // answers were within 0.3%, at twice the evaluations, most of them
    // spent climbing to where this one starts.) The narrow-budget starts of
    // balance() skip the second: with the Rows moves every budget sweep
    // holds without it there, at half their time.
    const std::vector<arch::Psi> start = ev_.psis();
    StartClock clock(ev_);
    Change journal;
    std::vector<std::pair<std::size_t, std::int64_t>> steps;  // per balancing step: journal end, interval
    journal_ = &journal;
    balance_interval(&steps);
    journal_ = nullptr;
    const auto early = static_cast<double>(ev_.interval()) * kEarlyStart;
    balance_latency();
    refine();
    const std::vector<arch::Psi> balanced = ev_.psis();
    const std::int64_t balanced_latency = ev_.latency_cycles();
    if (!early_start_) return;
    if (starts_) starts_->push_back(clock.record("budget", balanced_latency));
    ev_.set_all(start);
    std::size_t end = 0;
    for (const auto& [e, iv] : steps) {
      if (static_cast<double>(iv) < early) break;
      end = e;
    }
    if (end > 0) apply(Change(journal.begin(), journal.begin() + static_cast<std::ptrdiff_t>(end)));
    balance_latency();
    // Refinement gains a few percent at most: not worth it where the greedy
    // ends further than that behind.
    if (static_cast<double>(ev_.latency_cycles()) <= (1 + kRefineBehind) * static_cast<double>(balanced_latency))
      refine();
    if (starts_) starts_->push_back(clock.record("early", ev_.latency_cycles()));
    if (ev_.latency_cycles() >= balanced_latency) ev_.set_all(balanced);
  }

  // Refinement: repack every stage into its cheapest ψ that loses nothing
  // (interval within the design's, and for latency its fill no longer),
  // which re-factors p_in / p_out / fine freely; for latency, exchange (pay
  // for a move that does not fit with cheaper ψ elsewhere); then spend what
  // is left. None of these makes the objective worse.
  void refine() {
    // An exchange that finds nothing in one round seldom finds anything
    // after the repack and greedy of the next (same FPS on every bench
    // design without those tries), and its scans are the costliest here.
    bool exchanging = objective_ == Objective::Latency;
    for (int round = 0; round < kRefineRounds; ++round) {
      const std::int64_t before = objective_cycles(ev_, objective_);
      repack();
      if (exchanging) {
        int kept = 0;
        while (exchange()) ++kept;
        exchanging = kept > 0;
      }
      greedy();
      if (objective_cycles(ev_, objective_) >= before) break;
    }
  }

 private:
  static constexpr int kRefineRounds = 4;
  static constexpr int kTriesPerStep = 3;             // alternatives tried before a module counts as saturated
  static constexpr double kLevelReach = 0.2;          // how far one interval move may look ahead
  static constexpr double kEarlyStart = 2.0;          // the latency-first start: interval within this of balanced
  static constexpr double kRefineBehind = 0.01;       // refine that start only if within this of the other
  static constexpr double kBatchStep = 0.8;           // interval balancing: each batch aims this far below
  static constexpr double kBatchUntil = 0.5;          // ... while it takes at most this of the budget
  static constexpr double kTakeWithin = 0.1;          // a re-measured move this close to the best estimate is taken
  static constexpr std::size_t kExchangeGainers = 8;  // moves an exchange tries to pay for
  static constexpr int kRowsSteps = 64;               // steps one Rows measurement may take

  void greedy() {
    if (objective_ == Objective::Throughput) {
      balance_interval();
    } else {
      balance_latency();
    }
  }

  // --- Options and prices ---------------------------------------------------

  // Every legal ψ of stage s with its cycles and resources, enumerated the
  // first time the stage is looked at.
  const std::vector<Option>& options(int s) { return table(s).opts; }

  // A stage's options with, per option i, a lower bound on what any option
  // from i on takes of each resource (in either placement) and the shortest
  // fill from i on: the scans stop early where nothing further can win.
  struct Bound {
    arch::Resources least;
    std::int64_t fill = 0;
  };
  struct Table {
    std::vector<Option> opts;
    std::vector<Bound> from;  // from[i]: over opts[i..]
  };
  const Table& table(int s) {
    const Table* t = tables_of_[static_cast<std::size_t>(s)];
    return t ? *t : enumerate(s);
  }

  // What a stage's options are a function of: its shape, its instances, the
  // FIFOs after it (instances and depths, as they are now), the number
  // formats and whether the device has URAM. Stages alike in all of it (the
  // repeated blocks of a network) share one table, and so do solves: see
  // TableCache.
  struct TableKey {
    td::StageShape shape;  // all but the role
    std::int64_t count = 0;
    std::vector<std::pair<std::int64_t, std::int64_t>> fifos;  // per output stream: instances, depth
    net::Bits bits;
    bool uram = false;
    bool operator==(const TableKey& o) const {
      const td::StageShape &a = shape, &b = o.shape;
      return a.in_ch == b.in_ch && a.out_ch == b.out_ch && a.kh == b.kh && a.kw == b.kw && a.sh == b.sh &&
             a.sw == b.sw && a.ph == b.ph && a.pw == b.pw && a.depthwise == b.depthwise && a.groups == b.groups &&
             a.in == b.in && a.out == b.out && count == o.count && fifos == o.fifos && bits.weight == o.bits.weight &&
             bits.activation == o.bits.activation && uram == o.uram;
    }
  };
  struct TableKeyHash {
    std::size_t operator()(const TableKey& k) const {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      auto mix = [&](std::int64_t v) { h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL; };
      const td::StageShape& a = k.shape;
      for (std::int64_t v : {a.in_ch, a.out_ch, a.kh, a.kw, a.sh, a.sw, a.ph, a.pw, a.groups, a.in.c, a.in.h, a.in.w,
                             a.out.c, a.out.h, a.out.w, k.count})
        mix(v);
      mix(a.depthwise);
      for (const auto& [n, d] : k.fifos) {
        mix(n);
        mix(d);
      }
      mix(k.bits.weight);
      mix(k.bits.activation);
      mix(k.uram);
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };

  // Option tables outlive a solve: a search solves design after design
  // that share most layers (and solve() re-solves with the FIFO depths it
  // sized). Per thread, emptied when it holds more than kCachedOptions.
  struct TableCache {
    std::unordered_map<TableKey, std::shared_ptr<const Table>, TableKeyHash> tables;
    std::size_t options = 0;
  };
  static constexpr std::size_t kCachedOptions = std::size_t{1} << 16;
  static TableCache& table_cache() {
    thread_local TableCache cache;
    return cache;
  }

  const Table& enumerate(int s) {
    const StageSlot& slot = ev_.slot(s);
    TableKey key{slot.shape, ev_.module_instances(slot.module), {}, ev_.bits(), ev_.device_has_uram()};
    for (int st : ev_.module_outputs(slot.module)) key.fifos.emplace_back(ev_.stream_count(st), ev_.stream_depth(st));
    TableCache& cache = table_cache();
    if (auto it = cache.tables.find(key); it != cache.tables.end()) {
      tables_.push_back(it->second);
      return *(tables_of_[static_cast<std::size_t>(s)] = it->second.get());
    }
    auto made = std::make_shared<Table>();
    build_table(s, *made);
    if (cache.options + made->opts.size() > kCachedOptions) {
      cache.tables.clear();
      cache.options = 0;
    }
    cache.options += made->opts.size();
    cache.tables.emplace(std::move(key), made);
    tables_.push_back(made);
    return *(tables_of_[static_cast<std::size_t>(s)] = made.get());
  }

  void build_table(int s, Table& table) {
    const StageSlot& slot = ev_.slot(s);
    auto& opts = table.opts;
    const auto count = static_cast<double>(ev_.module_instances(slot.module));
    const bool uram = ev_.device_has_uram();
    const net::Bits& bits = ev_.bits();
    // Every unrolling's cycles first, in enumeration order (p_in, fine,
    // p_out); then the options built in their final order, slowest first, so
    // that "faster than x" is a suffix (equal intervals keep their
    // enumeration order).
    struct Unrolling {
      arch::Psi psi;
      std::int64_t interval, fill, mults;
      std::uint32_t p_in_index, weights = 0;
    };
    std::vector<Unrolling> all;
    all.reserve(slot.p_in.size() * slot.fine.size() * std::max<std::size_t>(1, slot.p_out.size()));
    // stage_cycles() from its parts, each computed once per value.
    std::vector<arch::StageOutTerms> out_terms;
    for (std::int64_t po : slot.p_out) out_terms.push_back(arch::stage_out_terms(slot.shape, po));
    std::vector<std::int64_t> fine_terms;
    for (std::int64_t pf : slot.fine) fine_terms.push_back(arch::stage_fine_terms(slot.shape, pf));
    for (std::size_t a = 0; a < slot.p_in.size(); ++a) {
      const std::int64_t pi = slot.p_in[a];
      const arch::StageInTerms in_terms = arch::stage_in_terms(slot.shape, pi);
      const arch::StageOutTerms own_out_terms[1] = {arch::stage_out_terms(slot.shape, pi)};
      for (std::size_t f = 0; f < slot.fine.size(); ++f) {
        const std::int64_t pf = slot.fine[f];
        const std::int64_t own_out[1] = {pi};  // depthwise: p_out follows p_in
        const std::int64_t* outs = slot.depthwise() ? own_out : slot.p_out.data();
        const arch::StageOutTerms* outs_terms = slot.depthwise() ? own_out_terms : out_terms.data();
        const std::size_t n_out = slot.depthwise() ? 1 : slot.p_out.size();
        for (std::size_t k = 0; k < n_out; ++k) {
          const arch::Psi psi{pi, outs[k], pf};
          const arch::Cycles c = arch::stage_cycles(slot.shape, in_terms, outs_terms[k], fine_terms[f]);
          all.push_back({psi, c.interval(), own_latency(c, slot.shape.out.h), arch::stage_multipliers(slot.shape, psi),
                         static_cast<std::uint32_t>(a)});
        }
      }
    }
    std::vector<std::pair<std::int64_t, std::uint32_t>> order(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) order[i] = {-all[i].interval, static_cast<std::uint32_t>(i)};
    std::sort(order.begin(), order.end());
    // The line buffers depend on ψ only through p_in, the weight memory
    // only through the multipliers: each placed once (the weights in both
    // kinds where that is a choice).
    std::vector<arch::Memory> line_buffers(slot.p_in.size());
    std::vector<char> have_line_buffer(slot.p_in.size(), 0);
    struct Weights {
      bool placed_yet = false;
      bool choice = false;
      arch::Memory placed;  // in BRAM18 where it is a choice
      double uram = 0;      // URAM it takes there
    };
    std::vector<std::pair<std::int64_t, std::uint32_t>> by_mults(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) by_mults[i] = {all[i].mults, static_cast<std::uint32_t>(i)};
    std::sort(by_mults.begin(), by_mults.end());
    std::uint32_t distinct = 0;
    for (std::size_t k = 0; k < by_mults.size(); ++k) {
      if (k > 0 && by_mults[k].first != by_mults[k - 1].first) ++distinct;
      all[by_mults[k].second].weights = distinct;
    }
    std::vector<Weights> weights(all.empty() ? 0 : distinct + 1);
    std::vector<std::pair<std::int64_t, arch::Resources>> fifos;  // by output width
    opts.reserve(all.size());
    for (const auto& [key, i] : order) {
      const Unrolling& u = all[i];
      Option& o = opts.emplace_back();
      o.psi = u.psi;
      o.interval = u.interval;
      o.fill = u.fill;
      o.width = slot.depthwise() ? u.psi.p_in : u.psi.p_out;
      Weights& w = weights[u.weights];
      if (!w.placed_yet) {
        w.placed_yet = true;
        arch::Psi p = u.psi;
        w.choice = arch::weight_memory_is_a_choice(slot.shape, p, bits, uram);
        if (w.choice) p.weight_memory = arch::WeightMemory::Bram;
        const arch::StageResources r = arch::stage_resources(slot.shape, p, bits, uram);
        w.placed = r.weights;
        if (w.choice) w.uram = arch::with_weight_memory(r, arch::WeightMemory::Uram, uram).weights.cost.uram;
      }
      if (!have_line_buffer[u.p_in_index]) {
        line_buffers[u.p_in_index] = arch::stage_line_buffer(slot.shape, u.psi.p_in, bits);
        have_line_buffer[u.p_in_index] = 1;
      }
      o.memory_choice = w.choice;
      if (o.memory_choice) o.psi.weight_memory = arch::WeightMemory::Bram;
      const arch::StageResources r =
          arch::stage_resources(slot.shape, o.psi, bits, w.placed, line_buffers[u.p_in_index]);
      o.res = r.total.scaled(count) + output_fifos(slot.module, o.width, fifos);
      if (o.memory_choice) {
        o.weight_bram18 = r.weights.cost.bram18 * count;
        o.weight_uram = w.uram * count;
      }
    }
    table.from.resize(opts.size());
    for (std::size_t i = opts.size(); i-- > 0;) {
      const Option& o = opts[i];
      Bound b{{o.res.dsp, o.res.bram18 - o.weight_bram18, o.res.uram, o.res.lut, o.res.ff}, o.fill};
      if (i + 1 < opts.size()) {
        const Bound& n = table.from[i + 1];
        b.least = {std::min(b.least.dsp, n.least.dsp), std::min(b.least.bram18, n.least.bram18),
                   std::min(b.least.uram, n.least.uram), std::min(b.least.lut, n.least.lut),
                   std::min(b.least.ff, n.least.ff)};
        b.fill = std::min(b.fill, n.fill);
      }
      table.from[i] = b;
    }
  }

  // The FIFOs after module m at output width w (at today's depths), looked
  // up in `cache` first: many options share a width.
  arch::Resources output_fifos(int m, std::int64_t w,
                               std::vector<std::pair<std::int64_t, arch::Resources>>& cache) const {
    for (const auto& [width, r] : cache)
      if (width == w) return r;
    arch::Resources r;
    for (int st : ev_.module_outputs(m))
      r += arch::fifo_resources(ev_.stream_depth(st), w, ev_.bits()).scaled(static_cast<double>(ev_.stream_count(st)));
    cache.emplace_back(w, r);
    return r;
  }

  const Option& option(int s, int i) { return options(s)[static_cast<std::size_t>(i)]; }

  // The ψ and resources of a pick.
  arch::Psi psi_of(int s, Pick k) {
    arch::Psi p = option(s, k.option).psi;
    if (k.uram) p.weight_memory = arch::WeightMemory::Uram;
    return p;
  }
  arch::Resources res_of(int s, Pick k) {
    const Option& o = option(s, k.option);
    return k.uram ? o.in_uram() : o.res;
  }

  // Price of each resource: one over what is left of it, so a step that
  // spends the scarcest resource costs most.
  arch::Resources prices() const {
    const arch::Resources& b = ev_.budget();
    const arch::Resources& t = ev_.total();
    auto price = [](double budget, double used) {
      if (budget <= 0) return 1e12;
      return 1.0 / std::max(budget - used, 1e-3 * budget);
    };
    return {price(b.dsp, t.dsp), price(b.bram18, t.bram18), price(b.uram, t.uram), price(b.lut, t.lut),
            price(b.ff, t.ff)};
  }

  static double priced(const arch::Resources& r, const arch::Resources& p) {
    return r.dsp * p.dsp + r.bram18 * p.bram18 + r.uram * p.uram + r.lut * p.lut + r.ff * p.ff;
  }

  // What stage s holds now: its instances and its output FIFOs.
  arch::Resources held(int s) const {
    const int m = ev_.slot(s).module;
    arch::Resources r = ev_.module_resources(m);
    for (int st : ev_.module_outputs(m)) r += ev_.stream_resources(st);
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

  // Calls f(base, uram) for each placement of o: BRAM18 (or the only one)
  // first, then URAM where the memory is a choice; `base` is added(o).
  template <typename F>
  static void for_each_placement(const Scan& sc, const Option& o, F f) {
    const double base = sc.added(o);
    f(base, false);
    if (o.memory_choice) f(base + sc.uram_extra(o), true);
  }

  // Whether every option from bound b on costs more than `cost` under sc:
  // the bound's price is below each of theirs in exact arithmetic (prices
  // are positive), and the margin is far beyond the roundings of either.
  static bool costs_more(const Scan& sc, const Bound& b, double cost) {
    const double least = priced(b.least, sc.price);
    return least - sc.held > cost + 1e-9 * (least + sc.held);
  }

  // Whether no option from bound b on has a ratio above `best` if none
  // gains more than `gain`: all of them then cost more than
  // gain / best (a margin again beyond the roundings).
  static bool beats_nothing(const Scan& sc, const Bound& b, double gain, double best) {
    const double least = priced(b.least, sc.price), margin = 1e-9 * (least + sc.held);
    const double added = least - sc.held - margin;
    return added > 0 && best > 0 && gain / added < best * (1 - 1e-9);
  }

  Scan scan(int s, const arch::Resources& price) const {
    const arch::Resources h = held(s);
    Scan sc;
    sc.price = price;
    sc.held = priced(h, price);
    sc.room = ev_.budget() + h + ev_.total().scaled(-1.0);
    return sc;
  }

  double added_cost(int s, Pick k, const arch::Resources& p) { return scan(s, p).added(option(s, k.option), k.uram); }

  // Stage s's own fill at its ψ (the evaluator holds its cycles).
  // Option::fill and own_fill() are a stage's own_latency() (Common.h).
  std::int64_t own_fill(int s) const {
    return own_latency(ev_.module_cycles(ev_.slot(s).module), ev_.slot(s).shape.out.h);
  }

  // The picks already tried for one step (at most kTriesPerStep).
  struct Tried {
    Pick picks[kTriesPerStep] = {};
    int n = 0;
    bool has(Pick k) const { return std::find(picks, picks + n, k) != picks + n; }
    void add(Pick k) {
      if (n < kTriesPerStep) picks[n++] = k;
    }
  };

  // The cheapest pick of stage s among options [begin, end) (not yet
  // tried, locally fitting) satisfying `ok`; ties go to the shorter fill,
  // then the faster, then BRAM18. none() if there is none.
  template <typename Ok>
  Pick cheapest(int s, const arch::Resources& p, const Tried& tried, Ok ok, std::size_t begin = 0,
                std::size_t end = SIZE_MAX, bool must_fit = true) {
    const Table& tb = table(s);
    const auto& opts = tb.opts;
    const Scan sc = scan(s, p);
    Pick best;
    double best_cost = 0;
    for (std::size_t i = begin; i < std::min(end, opts.size()); ++i) {
      // Nothing from here on can be cheaper (looked at every few options).
      if ((i - begin) % 8 == 0 && !best.none() && costs_more(sc, tb.from[i], best_cost)) break;
      const Option& o = opts[i];
      if (!ok(o)) continue;
      for_each_placement(sc, o, [&](double c, bool uram) {
        const Pick k{static_cast<int>(i), uram};
        const Option* b = best.none() ? nullptr : &opts[static_cast<std::size_t>(best.option)];
        const bool better = !b || c < best_cost ||
                            (c == best_cost && (o.fill < b->fill || (o.fill == b->fill && o.interval < b->interval)));
        // The costlier tests last.
        if (better && !(tried.n > 0 && tried.has(k)) && (!must_fit || sc.fits(o, uram))) {
          best = k;
          best_cost = c;
        }
      });
    }
    return best;
  }

  // The first option of stage s faster than `interval` (options are
  // sorted slowest first, so every later one is too).
  std::size_t first_faster(int s, std::int64_t interval) {
    const auto& opts = options(s);
    return static_cast<std::size_t>(
        std::partition_point(opts.begin(), opts.end(), [&](const Option& o) { return o.interval >= interval; }) -
        opts.begin());
  }

  // --- Applying and undoing -------------------------------------------------

  void apply(const Change& c) { ev_.set_psis(c); }

  // A one-stage change in a buffer kept for it (no allocation per trial).
  const Change& one(int s, const arch::Psi& p) {
    one_.assign(1, {s, p});
    return one_;
  }

  // Applies c; keeps it if the design fits and `accept` holds, else undoes it.
  template <typename Accept>
  bool try_keep(const Change& c, Accept accept) {
    ev_.begin_trial();
    apply(c);
    if (ev_.fits() && accept()) {
      ev_.commit();
      if (journal_) journal_->insert(journal_->end(), c.begin(), c.end());
      return true;
    }
    ev_.rollback();
    return false;
  }

  // --- Bottleneck balancing -------------------------------------------------

  // The slowest module is a stage: move it to its next faster legal ψ — the
  // cheapest one with a lower interval, over all p_in / p_out / fine
  // combinations (so a re-factoring is a step too) — trying the next
  // cheapest while the whole design does not fit.
  bool improve_stage(int s) {
    const int m = ev_.slot(s).module;
    const std::int64_t before = ev_.module_interval(m), global = ev_.interval();
    const arch::Resources p = prices();
    Tried tried;
    // The next step is almost always among the options at most 4x faster;
    // look further only if none of those will do.
    const std::size_t faster = first_faster(s, before), near = first_faster(s, before / 4);
    auto faster_than_now = [&](const Option& o) { return o.interval < before; };
    auto accept = [&] { return ev_.module_interval(m) < before && ev_.interval() <= global; };
    for (int k = 0; k < kTriesPerStep; ++k) {
      Pick i = cheapest(s, p, tried, faster_than_now, faster, near);
      if (i.none()) i = cheapest(s, p, tried, faster_than_now, near);
      if (i.none()) break;
      tried.add(i);
      if (try_keep(one(s, psi_of(s, i)), accept)) return true;
    }
    // Nothing fits as the weights lie: the cheapest faster step with every
    // weight memory re-placed.
    if (!ev_.device_has_uram()) return false;
    const Pick any = cheapest(s, p, Tried{}, faster_than_now, faster, near, false);
    return !any.none() && replace_weights({{s, psi_of(s, any)}}, accept);
  }

  // --- Weight memories ------------------------------------------------------
  //
  // The greedy places each weight memory by the prices of the moment; late
  // in a search BRAM18 and URAM can both be full with memories in the kind
  // that holds them less well (a shallow memory wastes most of a URAM's 4K
  // rows), and a step that needs either does not fit. Re-placed — those
  // that take least URAM per BRAM18 in URAM while it has room, the rest in
  // BRAM18 (the greedy order of the fractional two-bin packing) — the same
  // memories may leave room for it.

  // Applies c and re-places every weight memory for it; kept if the design
  // then fits and `accept` holds.
  template <typename Accept>
  bool replace_weights(const Change& c, Accept accept) {
    ev_.begin_trial();
    apply(c);
    struct Item {
      int stage;
      double bram18, uram;  // the weights in either kind (all instances)
      bool in_uram;
    };
    std::vector<Item> items;
    double bram18_held = 0, uram_held = 0;
    for (int t = 0; t < ev_.stage_count(); ++t) {
      const StageSlot& slot = ev_.slot(t);
      arch::Psi p = ev_.psi(t);
      if (!arch::weight_memory_is_a_choice(slot.shape, p, ev_.bits(), true)) continue;
      const bool in_uram = p.weight_memory == arch::WeightMemory::Uram ||
                           (p.weight_memory == arch::WeightMemory::Auto &&
                            arch::auto_weight_memory(slot.shape, p, ev_.bits(), true) == arch::WeightMemory::Uram);
      p.weight_memory = arch::WeightMemory::Bram;
      const arch::StageResources b = arch::stage_resources(slot.shape, p, ev_.bits(), true);
      const auto count = static_cast<double>(ev_.module_instances(slot.module));
      const Item it{t, b.weights.cost.bram18 * count,
                    arch::with_weight_memory(b, arch::WeightMemory::Uram, true).weights.cost.uram * count, in_uram};
      (in_uram ? uram_held : bram18_held) += in_uram ? it.uram : it.bram18;
      items.push_back(it);
    }
    // What the weights may take: the budget less everything else.
    const double bram18_room = ev_.budget().bram18 - (ev_.total().bram18 - bram18_held);
    const double uram_room = ev_.budget().uram - (ev_.total().uram - uram_held);
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.uram * b.bram18 < b.uram * a.bram18; });
    double bram18 = 0, uram = 0;
    Change moves;
    for (const Item& it : items) {
      const bool to_uram = uram + it.uram <= uram_room;
      (to_uram ? uram : bram18) += to_uram ? it.uram : it.bram18;
      if (to_uram == it.in_uram) continue;
      arch::Psi p = ev_.psi(it.stage);
      p.weight_memory = to_uram ? arch::WeightMemory::Uram : arch::WeightMemory::Bram;
      moves.emplace_back(it.stage, p);
    }
    bool kept = bram18 <= bram18_room && !moves.empty();
    if (kept) {
      apply(moves);
      kept = ev_.fits() && accept();
    }
    if (!kept) {
      ev_.rollback();
      return false;
    }
    ev_.commit();
    if (journal_) {
      journal_->insert(journal_->end(), c.begin(), c.end());
      journal_->insert(journal_->end(), moves.begin(), moves.end());
    }
    return true;
  }

  // The slowest module is a stream block, pool, add or host port, whose
  // width is its producers': widen one producer stage (the cheapest wider
  // ψ that is no slower), or all at once (an add whose inputs are equally
  // narrow).
  bool widen_sources(int m) {
    const std::int64_t before = ev_.module_interval(m), global = ev_.interval();
    const arch::Resources p = prices();
    auto faster = [&] { return ev_.module_interval(m) < before && ev_.interval() <= global; };
    Change all;
    for (int s : ev_.width_sources(m)) {
      const int sm = ev_.slot(s).module;
      const std::int64_t width = ev_.module_width_out(sm), iv = ev_.module_interval(sm);
      Tried tried;
      for (int k = 0; k < kTriesPerStep; ++k) {
        const Pick i = cheapest(s, p, tried, [&](const Option& o) { return o.width > width && o.interval <= iv; });
        if (i.none()) break;
        tried.add(i);
        if (k == 0) all.emplace_back(s, psi_of(s, i));
        if (try_keep(one(s, psi_of(s, i)), faster)) return true;
      }
    }
    return all.size() > 1 && try_keep(all, faster);
  }

  bool improve(int m) {
    const int s = ev_.stage_of_module(m);
    return s >= 0 ? improve_stage(s) : widen_sources(m);
  }

  // Peak FPS: raise the slowest module until it cannot improve. Far from
  // the budget, every stage slower than kBatchStep of the interval moves at
  // once (batch_to()), with single steps for what a batch cannot reach (the
  // stream blocks and pools it leaves behind); once a batch would take any
  // resource past kBatchUntil of the budget, single steps only. The order
  // of the steps matters where the budget binds, and for the latency-first
  // start of run(), a state of this balancing: batching on up to the budget
  // gave the same FPS on every bench design, but lost up to 7% at some
  // budgets of the sweep (resnet18-fmnist SVD on the ZC706) through that
  // start. `steps` gets the journal end and interval after each kept
  // change.
  void balance_interval(std::vector<std::pair<std::size_t, std::int64_t>>* steps = nullptr) {
    bool batching = true;
    auto record = [&] {
      if (steps) steps->emplace_back(journal_ ? journal_->size() : 0, ev_.interval());
    };
    while (true) {
      if (batching) {
        const std::int64_t before = ev_.interval();
        const auto target = static_cast<std::int64_t>(static_cast<double>(before) * kBatchStep);
        const int r = batch_to(target);
        if (r > 0) {
          record();
          continue;
        }
        if (r < 0) batching = false;
        // Step by step until below the target (or saturated).
        bool moved = false;
        while (ev_.interval() > target && improve(ev_.bottleneck())) {
          record();
          moved = true;
        }
        if (!moved) break;
        continue;
      }
      if (!improve(ev_.bottleneck())) break;
      record();
    }
  }

  // Every stage slower than `target` to its cheapest ψ that meets it, at
  // once: 1 if kept (its interval fell), -1 if it would take a resource
  // past kBatchUntil of the budget, 0 otherwise.
  int batch_to(std::int64_t target) {
    const std::int64_t before = ev_.interval();
    const arch::Resources p = prices();
    Change c;
    for (int s = 0; s < ev_.stage_count(); ++s) {
      const int m = ev_.slot(s).module;
      if (ev_.module_interval(m) <= target) continue;
      // As improve_stage(): among the options at most 4x faster first.
      auto meets = [&](const Option& o) { return o.interval <= target; };
      const std::size_t begin = first_faster(s, target + 1), near = std::max(begin, first_faster(s, target / 4));
      Pick k = cheapest(s, p, Tried{}, meets, begin, near, false);
      if (k.none()) k = cheapest(s, p, Tried{}, meets, near, SIZE_MAX, false);
      if (k.none()) return 0;
      c.emplace_back(s, psi_of(s, k));
    }
    if (c.empty()) return 0;
    ev_.begin_trial();
    apply(c);
    if (!ev_.fits() || ev_.total().max_utilisation(ev_.budget()) > kBatchUntil) {
      ev_.rollback();
      return -1;
    }
    if (ev_.interval() >= before) {
      ev_.rollback();
      return 0;
    }
    ev_.commit();
    if (journal_) journal_->insert(journal_->end(), c.begin(), c.end());
    return 1;
  }

  // --- Batch-1 latency: interval and fill together --------------------------
  //
  // latency = fill + interval (the row timeline). Four kinds of move
  // compete on latency drop per added (priced) resource:
  //   Level   lower the interval: balance step by step (improve()) and take
  //           the prefix of steps worth most (measure_level());
  //   Rows    the same within one resolution (the stages with the same
  //           output rows), whose per-row lag adds up along the network
  //           (measure_rows());
  //   Fill    a stage to the ψ with the best own-fill drop per cost that
  //           keeps the interval (p_in and fine shorten its window and first
  //           output); if that ψ narrows the output, the best one that does
  //           not is weighed too (FillKeepWidth);
  //   Widen   a wider producer for a pool or global pool, whose fill is its
  //           input frame or window over that width.
  // Lazy greedy: each move's ratio is an estimate until it is re-measured
  // on the current design (an epoch ends at every accepted move); a freshly
  // measured move that still tops the queue is taken. Moves are measured
  // exactly (a trial on the evaluator), proposed from estimates.

  enum class Kind { Level, Fill, FillKeepWidth, Widen, Rows };

  struct Entry {
    double ratio = 0;
    std::int64_t epoch = -1;
    Kind kind = Kind::Fill;
    int stage = -1, module = -1;
    Change change;
  };

  static bool width_sets_fill(arch::ModuleKind k) {
    return k == arch::ModuleKind::MaxPool || k == arch::ModuleKind::AvgPool || k == arch::ModuleKind::GlobalAvgPool;
  }

  // The Fill or Widen change an entry proposes on the current design, into
  // `out` (its buffer reused: this runs for every measurement); empty if
  // none.
  void propose(const Entry& e, Change& out) {
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
  double widen_gain(int m, int s, const Option& o, std::int64_t own, bool on_path) {
    const std::int64_t pool = ev_.pool_fill_at(m, ev_.module_width_in(m)) - pool_fill_if(m, s, o.width);
    return static_cast<double>(pool + (on_path ? own - o.fill : 0));
  }

  // Pool m's fill if stage s's output were w wide, memoised while the
  // design does not change (many options share a width).
  std::int64_t pool_fill_if(int m, int s, std::int64_t w) {
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
  const std::vector<char>& fill_path() {
    if (path_stamp_ != ev_.evaluations()) {
      path_ = on_fill_path();
      path_stamp_ = ev_.evaluations();
    }
    return path_;
  }

  // gain_ratio() with c applied; the design is left as it was.
  template <typename GainRatio>
  double trial_value(const Change& c, GainRatio gain_ratio) {
    ev_.begin_trial();
    apply(c);
    const double r = gain_ratio();
    ev_.rollback();
    return r;
  }

  // Re-measures an entry on the current design: its change and its true
  // latency drop per added resource (0 if it does not fit or gains nothing).
  // A Fill or Widen change worth at least `take_at` (and more than 0) is
  // kept at once, saving its re-evaluation: returns whether it was.
  bool measure(Entry& e, double take_at) {
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

  // Interval moves: balance step by step towards an interval kLevelReach
  // below the current one, and take the prefix of steps with the best
  // latency drop per cost. One step is often worth a cycle or two (modules
  // sit just below one another after balancing) while a few together
  // unlock a real drop, so single steps alone would undervalue them
  // against fill moves.
  //
  // The steps are kept (level_): balancing is a function of the design, so
  // after the greedy takes a prefix of them, the next level measurement
  // starts with the rest, from the state they were measured in. It only
  // re-values them (each step's state is recorded) and balances further if
  // the lower interval now reaches further. Any other move taken starts the
  // chain anew.
  struct LevelStep {
    std::size_t end = 0;  // journal entries up to and including this step
    bool fits = true;
    std::int64_t interval = 0, latency = 0;
    arch::Resources total;
  };
  struct LevelChain {
    bool valid = false;
    bool saturated = false;  // the bottleneck could not improve after the last step
    Change journal;          // every step's changes, in order
    std::vector<LevelStep> steps;
    std::size_t taken = 0;  // journal entries the design has taken (a step's end)
  };

  template <typename RatioOf>
  void measure_level(Entry& e, std::int64_t interval, RatioOf ratio_of) {
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
  void measure_rows(Entry& e, RatioOf ratio_of) {
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

  // The queue orders entries (kept in `entries`, so that their changes are
  // not copied about) by ratio, then kind, then stage.
  struct Key {
    double ratio;
    int kind, stage, index;
    bool operator<(const Key& o) const {
      if (ratio != o.ratio) return ratio < o.ratio;
      if (kind != o.kind) return kind > o.kind;
      return stage > o.stage;
    }
  };

  void balance_latency() {
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

  // --- Refinement -----------------------------------------------------------

  // Every stage to its cheapest ψ that keeps the design's interval and (for
  // latency) the stage's fill and output width; kept if the design is no
  // worse.
  void repack() {
    const std::int64_t interval = ev_.interval(), cycles = objective_cycles(ev_, objective_);
    const bool latency = objective_ == Objective::Latency;
    for (int s = 0; s < ev_.stage_count(); ++s) {
      const arch::Resources p = prices();
      const std::int64_t own = own_fill(s);
      // Narrower outputs are allowed: the full evaluation checks what follows.
      const Pick i = cheapest(s, p, Tried{},
                              [&](const Option& o) { return o.interval <= interval && (!latency || o.fill <= own); });
      if (i.none() || psi_of(s, i) == ev_.psi(s) || added_cost(s, i, p) >= 0) continue;
      try_keep({{s, psi_of(s, i)}},
               [&] { return ev_.interval() <= interval && objective_cycles(ev_, objective_) <= cycles; });
    }
  }

  // --- Exchange (batch-1 latency) -------------------------------------------
  //
  // When the greedy stops, the moves left are those that do not fit. An
  // exchange pays for one of them by moving other stages to cheaper ψ that
  // keep the interval, losing as little fill as possible: the knapsack
  // 1-swap the greedy cannot make (it spent the budget on small steps first).

  struct Payer {
    int stage = -1;
    Pick pick;
    double score = 0;  // estimated latency lost (per unit of deficit freed, for shares)
  };

  // The stages on the longest fill path.
  std::vector<char> on_fill_path() const {
    std::vector<char> on(static_cast<std::size_t>(ev_.stage_count()), 0);
    for (int s : ev_.fill_path_stages()) on[static_cast<std::size_t>(s)] = 1;
    return on;
  }

  struct Gainer {
    double ratio = 0;
    int stage = -1;
    Pick pick;
  };

  // Gainers: for every stage on the fill path and every producer of a pool,
  // the pick with the best estimated latency drop per added cost as if the
  // budget were unlimited; best first.
  std::vector<Gainer> gainers(const std::vector<char>& path) {
    std::vector<Gainer> out;
    const std::int64_t interval = ev_.interval();
    const arch::Resources p = prices();
    auto best_of = [&](int s, auto gain_of) {
      const Scan sc = scan(s, p);
      const auto& opts = options(s);
      Pick best;
      double best_ratio = 0;
      for (std::size_t i = first_faster(s, interval + 1); i < opts.size(); ++i) {
        if (opts[i].interval > interval) continue;
        const double gain = gain_of(opts[i]);
        if (gain <= 0) continue;
        for_each_placement(sc, opts[i], [&](double added, bool uram) {
          const double r = ratio(gain, added);
          if (best.none() || r > best_ratio) {
            best = {static_cast<int>(i), uram};
            best_ratio = r;
          }
        });
      }
      if (!best.none()) out.push_back({best_ratio, s, best});
    };
    for (int s = 0; s < ev_.stage_count(); ++s) {
      if (!path[static_cast<std::size_t>(s)]) continue;
      const std::int64_t own = own_fill(s);
      best_of(s, [&](const Option& o) { return static_cast<double>(own - o.fill); });
    }
    for (int m = 0; m < ev_.module_count(); ++m) {
      if (!width_sets_fill(ev_.module_kind(m))) continue;
      for (int s : ev_.width_sources(m)) {
        const std::int64_t width = ev_.module_width_out(ev_.slot(s).module), own = own_fill(s);
        const bool on = path[static_cast<std::size_t>(s)];
        best_of(s, [&](const Option& o) { return o.width <= width ? 0.0 : widen_gain(m, s, o, own, on); });
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Gainer& a, const Gainer& b) { return a.ratio > b.ratio; });
    if (out.size() > kExchangeGainers) out.resize(kExchangeGainers);
    return out;
  }

  // One exchange that lowers the latency, if there is one (kept).
  bool exchange() {
    const std::int64_t latency = ev_.latency_cycles(), interval = ev_.interval();
    const std::vector<char> path = on_fill_path();
    // The downgrades are only needed once a gainer lacks resources.
    std::vector<Downgrade> downs;
    bool have_downs = false;
    for (const Gainer& gainer : gainers(path)) {
      const int g = gainer.stage;
      const Change change = {{g, psi_of(g, gainer.pick)}};
      // What the gainer lacks, per resource.
      const arch::Resources after = ev_.total() + res_of(g, gainer.pick) + held(g).scaled(-1.0);
      arch::Resources deficit{std::max(0.0, after.dsp - ev_.budget().dsp),
                              std::max(0.0, after.bram18 - ev_.budget().bram18),
                              std::max(0.0, after.uram - ev_.budget().uram),
                              std::max(0.0, after.lut - ev_.budget().lut), std::max(0.0, after.ff - ev_.budget().ff)};
      if (priced(deficit, {1, 1, 1, 1, 1}) <= 0) continue;  // it fits: the greedy judged it worthless
      if (!have_downs) {
        downs = downgrades(path, interval);
        have_downs = true;
      }
      const Payers payers = find_payers(g, deficit, downs);
      auto accept = [&] { return ev_.interval() <= interval && ev_.latency_cycles() < latency; };
      // Pay with one stage that covers it all, the least lost first ...
      if (payers.alone.stage >= 0) {
        Change c = change;
        c.emplace_back(payers.alone.stage, psi_of(payers.alone.stage, payers.alone.pick));
        if (try_keep(c, accept)) return true;
      }
      // ... or with the best payers per unit freed until it is covered.
      Change c = change;
      arch::Resources freed;
      for (const auto& py : payers.shares) {
        c.emplace_back(py.stage, psi_of(py.stage, py.pick));
        freed += held(py.stage) + res_of(py.stage, py.pick).scaled(-1.0);
        if (covers(freed, deficit)) break;
      }
      if (covers(freed, deficit) && try_keep(c, accept)) return true;
    }
    return false;
  }

  // The pools and global pools whose input width stage s sets.
  const std::vector<int>& pools_fed(int s) {
    if (pools_fed_.empty()) {
      pools_fed_.resize(static_cast<std::size_t>(ev_.stage_count()));
      for (int m = 0; m < ev_.module_count(); ++m)
        if (width_sets_fill(ev_.module_kind(m)))
          for (int src : ev_.width_sources(m)) pools_fed_[static_cast<std::size_t>(src)].push_back(m);
    }
    return pools_fed_[static_cast<std::size_t>(s)];
  }

  static bool covers(const arch::Resources& freed, const arch::Resources& deficit) {
    return freed.dsp >= deficit.dsp && freed.bram18 >= deficit.bram18 && freed.uram >= deficit.uram &&
           freed.lut >= deficit.lut && freed.ff >= deficit.ff;
  }

  struct Payers {
    std::vector<Payer> shares;  // per stage, the ψ losing least per deficit freed; best first
    Payer alone;                // the ψ of one stage that frees it all, losing least
  };

  // A cheaper ψ for a stage (interval within the design's): what it frees
  // and the latency it is estimated to lose.
  struct Downgrade {
    int stage = -1;
    Pick pick;
    arch::Resources freed;
    double lost = 0;
    unsigned frees = 0;  // bit per resource (dsp, bram18, uram, lut, ff) it frees some of
  };

  static unsigned positive_parts(const arch::Resources& r) {
    return (r.dsp > 0 ? 1u : 0u) | (r.bram18 > 0 ? 2u : 0u) | (r.uram > 0 ? 4u : 0u) | (r.lut > 0 ? 8u : 0u) |
           (r.ff > 0 ? 16u : 0u);
  }

  std::vector<Downgrade> downgrades(const std::vector<char>& path, std::int64_t interval) {
    std::vector<Downgrade> out;
    out.reserve(4096);
    for (int t = 0; t < ev_.stage_count(); ++t) {
      const arch::Resources h = held(t);
      const std::int64_t own = own_fill(t), width = ev_.module_width_out(ev_.slot(t).module);
      const auto& opts = options(t);
      for (std::size_t i = first_faster(t, interval + 1); i < opts.size(); ++i) {
        const Option& o = opts[i];
        double lost = -1;  // computed once per option, if a placement frees something
        for (bool uram : {false, true}) {
          if (uram && !o.memory_choice) break;
          const Pick k{static_cast<int>(i), uram};
          if (psi_of(t, k) == ev_.psi(t)) continue;
          const arch::Resources freed = h + res_of(t, k).scaled(-1.0);
          if (freed.dsp <= 0 && freed.bram18 <= 0 && freed.uram <= 0 && freed.lut <= 0 && freed.ff <= 0) continue;
          if (lost < 0) {
            // A cycle of fill lost on the path costs (its own, and that of
            // the pools a narrower output feeds); off it, a little for luck.
            lost = path[static_cast<std::size_t>(t)] ? std::max<double>(0, static_cast<double>(o.fill - own)) : 0;
            if (o.width < width)
              for (int m : pools_fed(t))
                lost += static_cast<double>(pool_fill_if(m, t, o.width) - ev_.pool_fill_at(m, ev_.module_width_in(m)));
            lost += 1e-3;
          }
          out.push_back({t, k, freed, lost, positive_parts(freed)});
        }
      }
    }
    return out;
  }

  // The downgrades (of stages other than the gainer) that pay the deficit.
  Payers find_payers(int gainer, const arch::Resources& deficit, const std::vector<Downgrade>& downs) const {
    auto share = [](double freed, double need) { return need > 0 ? std::min(freed, need) / need : 0.0; };
    const double parts =
        (deficit.dsp > 0) + (deficit.bram18 > 0) + (deficit.uram > 0) + (deficit.lut > 0) + (deficit.ff > 0);
    Payers out;
    Payer best;  // of the stage being looked at
    auto flush = [&] {
      if (best.stage >= 0) out.shares.push_back(best);
      best = {};
    };
    // A downgrade that frees none of what is lacking has no positive share
    // (it adds nothing, or takes more): skip it at once. (Skipping it before
    // the flush below changes nothing: the downgrades come grouped by
    // stage, so the previous stage's best is flushed at the next one kept.)
    const unsigned lacking = positive_parts(deficit);
    for (const Downgrade& d : downs) {
      if ((d.frees & lacking) == 0 || d.stage == gainer) continue;
      if (d.stage != best.stage) flush();
      // The shares of what is not lacking are 0 (and 0 added changes no sum).
      double freed = 0;
      if (lacking & 1u) freed += share(d.freed.dsp, deficit.dsp);
      if (lacking & 2u) freed += share(d.freed.bram18, deficit.bram18);
      if (lacking & 4u) freed += share(d.freed.uram, deficit.uram);
      if (lacking & 8u) freed += share(d.freed.lut, deficit.lut);
      if (lacking & 16u) freed += share(d.freed.ff, deficit.ff);
      if (freed <= 0) continue;
      const double score = d.lost / freed;
      if (best.stage < 0 || score < best.score) best = {d.stage, d.pick, score};
      if (freed >= parts - 1e-9 && (out.alone.stage < 0 || d.lost < out.alone.score))
        out.alone = {d.stage, d.pick, d.lost};
    }
    flush();
    std::stable_sort(out.shares.begin(), out.shares.end(),
                     [](const Payer& a, const Payer& b) { return a.score < b.score; });
    return out;
  }

  Evaluator& ev_;
  Objective objective_;
  bool early_start_ = true;
  std::vector<SolveStart>* starts_ = nullptr;
  std::vector<const Table*> tables_of_;               // per stage, into tables_ (null until enumerated)
  std::vector<std::shared_ptr<const Table>> tables_;  // those this solve uses (the cache may drop them)
  std::vector<std::vector<int>> pools_fed_;
  std::vector<char> path_;
  std::int64_t path_stamp_ = -1;
  struct Memo {
    std::uint64_t key = 0;
    std::int64_t stamp = -1, value = 0;
  };
  static constexpr int kMemoBits = 10;
  std::vector<Memo> memo_ = std::vector<Memo>(std::size_t{1} << kMemoBits);  // pool_fill_if()
  Change one_;                                                               // one()'s
  Entry keep_;                                                               // measure()'s FillKeepWidth alternative
  Change* journal_ = nullptr;                 // when set, try_keep() records what it keeps
  LevelChain level_;                          // see measure_level()
  std::vector<std::vector<int>> row_groups_;  // stages by output rows (see measure_rows())
  std::int64_t epoch_ = 0;
};

}  // namespace

StartClock::StartClock(const Evaluator& ev)
    : ev_(ev), t0_(Clock::now()), evaluations_(ev.evaluations()), rows_(ev.row_updates()) {}

SolveStart StartClock::record(std::string name, std::int64_t latency_cycles) {
  SolveStart s{std::move(name), latency_cycles, ev_.evaluations() - evaluations_, ev_.row_updates() - rows_,
               std::chrono::duration<double>(Clock::now() - t0_).count()};
  t0_ = Clock::now();
  evaluations_ = ev_.evaluations();
  rows_ = ev_.row_updates();
  return s;
}

void balance(Evaluator& ev, Objective objective, std::vector<SolveStart>* starts) {
  if (objective == Objective::Throughput) {
    Balancer(ev, objective).run();
    return;
  }
  // Batch-1 latency: the greedy's path depends on the prices, and where
  // two resources bind at once (LUTs with DSPs, since the LUT model was
  // refitted to yosys) a slightly larger budget could lead it somewhere
  // worse. So the greedy also runs to kNarrowBudgets of the budget and then
  // spends the rest (refine() at the full budget); the best answer is kept.
  // With the fill estimate as the objective one narrow start (0.97) was
  // enough; on the row timeline undecomposed ResNet-18 on the U250 lost
  // 2.5% from budget 0.6 to 0.625 with it alone (the budget sweep,
  // tests/search/test_solver_sweep.cpp), and a second start at 0.94 holds
  // every sweep within 1%, at a third more time. Since the DSP rule counts
  // packed pairs (issue 20) tiny-dw on the ZCU102 lost 5.7% from budget
  // 0.25 to 0.275 with those two: the greedy spends a larger budget on one
  // wide late stage (dw4 at 16/16/25, +200 DSPs) before the two early ones
  // that pace the rows. A ladder down to 0.75 (six starts) held every sweep
  // within 1% again, at 2.2-2.5x the time of two starts. Since the greedy
  // has Rows moves (measure_rows(), which speed up a whole resolution
  // together) three starts, 0.97, 0.9 and 0.8, without the early start,
  // hold every sweep and give the same answers within 1% as six
  // (docs/solver.md); 0.97 and 0.94 alone lost 1.8% on undecomposed
  // ResNet-18 from budget 0.425 to 0.45.
  constexpr double kNarrowBudgets[] = {0.97, 0.9, 0.8};
  const std::vector<arch::Psi> start = ev.psis();
  const arch::Resources full = ev.budget();
  Balancer(ev, objective, true, starts).run();
  const std::vector<arch::Psi> first = ev.psis();
  const std::int64_t first_latency = ev.latency_cycles();
  std::vector<arch::Psi> best = first;
  std::int64_t best_latency = first_latency;
  for (double narrow_budget : kNarrowBudgets) {
    StartClock clock(ev);
    ev.set_all(start);
    ev.set_budget(full.scaled(narrow_budget));
    const bool ran = ev.fits();  // ψ = 1 at the narrow budget
    if (ran) {
      Balancer narrow(ev, objective, false);
      narrow.run();
      ev.set_budget(full);
      narrow.refine();
    }
    ev.set_budget(full);
    if (starts) {
      char name[32];
      std::snprintf(name, sizeof name, "narrow %.2f", narrow_budget);
      starts->push_back(clock.record(name, ran ? ev.latency_cycles() : 0));  // 0: did not run
    }
    if (ev.latency_cycles() < best_latency) {
      best_latency = ev.latency_cycles();
      best = ev.psis();
    }
  }
  ev.set_all(best);
}

}  // namespace mixtd::search::detail
