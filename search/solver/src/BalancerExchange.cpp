// Refinement: repack every stage into its cheapest ψ that loses nothing, and
// exchange (pay for a move that does not fit with cheaper ψ elsewhere)
// (Balancer.h).
#include <algorithm>
#include <vector>

#include "Balancer.h"

namespace mixtd::search::detail {

// Every stage to its cheapest ψ that keeps the design's interval and (for
// latency) the stage's fill and output width; kept if the design is no
// worse.
void Balancer::repack() {
  const std::int64_t interval = ev_.interval(), cycles = objective_cycles(ev_, objective_);
  const bool latency = objective_ == Objective::Latency;
  for (int s = 0; s < ev_.stage_count(); ++s) {
    const arch::Resources p = prices();
    const std::int64_t own = own_fill(s);
    // Narrower outputs are allowed: the full evaluation checks what follows.
    const Pick i =
        cheapest(s, p, Tried{}, [&](const Option& o) { return o.interval <= interval && (!latency || o.fill <= own); });
    if (i.none() || psi_of(s, i) == ev_.psi(s) || added_cost(s, i, p) >= 0) continue;
    try_keep({{s, psi_of(s, i)}},
             [&] { return ev_.interval() <= interval && objective_cycles(ev_, objective_) <= cycles; });
  }
}

// The stages on the longest fill path.
std::vector<char> Balancer::on_fill_path() const {
  std::vector<char> on(static_cast<std::size_t>(ev_.stage_count()), 0);
  for (int s : ev_.fill_path_stages()) on[static_cast<std::size_t>(s)] = 1;
  return on;
}

// Gainers: for every stage on the fill path and every producer of a pool,
// the pick with the best estimated latency drop per added cost as if the
// budget were unlimited; best first.
std::vector<Balancer::Gainer> Balancer::gainers(const std::vector<char>& path) {
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
bool Balancer::exchange() {
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
                            std::max(0.0, after.uram - ev_.budget().uram), std::max(0.0, after.lut - ev_.budget().lut),
                            std::max(0.0, after.ff - ev_.budget().ff)};
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
const std::vector<int>& Balancer::pools_fed(int s) {
  if (pools_fed_.empty()) {
    pools_fed_.resize(static_cast<std::size_t>(ev_.stage_count()));
    for (int m = 0; m < ev_.module_count(); ++m)
      if (width_sets_fill(ev_.module_kind(m)))
        for (int src : ev_.width_sources(m)) pools_fed_[static_cast<std::size_t>(src)].push_back(m);
  }
  return pools_fed_[static_cast<std::size_t>(s)];
}

std::vector<Balancer::Downgrade> Balancer::downgrades(const std::vector<char>& path, std::int64_t interval) {
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
Balancer::Payers Balancer::find_payers(int gainer, const arch::Resources& deficit,
                                       const std::vector<Downgrade>& downs) const {
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

}  // namespace mixtd::search::detail
