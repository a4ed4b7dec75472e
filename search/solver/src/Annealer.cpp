#include "Annealer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "Common.h"
#include "mixtd/arch/Resources.h"
#include "mixtd/support/Rng.h"

namespace mixtd::search::detail {

namespace {

// Simulated annealing over ψ from ψ = 1 (independent of solve(), so that it
// can serve as its reference). Designs over budget are rejected outright.
// The score is log FPS, so the temperature is a relative change; a tiny
// resource term breaks the ties of moves that do not touch the bottleneck,
// keeping idle stages lean for later moves.
//
// Moves (one stage unless said):
//   step      one dimension to a neighbouring legal value (sometimes two or
//             three values away)
//   refactor  one dimension up a value, another down
//   jump      a uniformly random legal ψ
//   leaner    a random ψ that keeps the design's interval (frees resources,
//             or shortens the fill)
//   trade     a step up for a stage that sets the bottleneck, paid for by a
//             step down of one or two other stages in the same move — the
//             way across the budget boundary, which single steps cannot cross
//   faster    the bottleneck stage to a random ψ up to twice as fast, paid
//             for (half the time) as in trade
//   memory    a stage's weight memory from BRAM18 to URAM or back (where it
//             is a choice: block RAM on a device with URAM; 8% of the moves
//             there, none elsewhere, so the moves on devices without URAM
//             are as they were)
// A move keeps a stage's weight memory kind where it stays a choice; jump,
// leaner and faster draw it at random with the unrolling.
// Half the single-stage moves go to the stages that set the bottleneck's
// speed (for batch-1 latency a quarter to the stages on the longest fill
// path); a uniform choice would spend almost all of them on idle stages.
class Annealer {
 public:
  Annealer(Evaluator& ev, Objective objective, const AnnealOptions& o)
      : ev_(ev), objective_(objective), o_(o), rng_(o.seed) {}

  void run() {
    double current = score();
    std::vector<arch::Psi> best = ev_.psis();
    double best_fps = fps(ev_, objective_);
    const double moves = static_cast<double>(std::max<std::int64_t>(1, o_.moves));
    Change change;
    for (std::int64_t i = 0; i < o_.moves; ++i) {
      const double t = o_.t_start * std::pow(o_.t_end / o_.t_start, static_cast<double>(i) / moves);
      change.clear();
      propose(change);
      if (change.empty()) continue;
      ev_.begin_trial();
      for (const auto& [s, p] : change) ev_.set_psi(s, p);
      const double next = ev_.fits() ? score() : -1e300;
      if (next < current && rng_.uniform() >= std::exp((next - current) / t)) {
        ev_.rollback();
        continue;
      }
      ev_.commit();
      current = next;
      const double f = fps(ev_, objective_);
      if (f > best_fps) {
        best_fps = f;
        best = ev_.psis();
      }
    }
    ev_.set_all(best);
  }

 private:
  using Change = std::vector<std::pair<int, arch::Psi>>;
  static constexpr double kResourceWeight = 1e-3;

  double score() const {
    return std::log(fps(ev_, objective_)) - kResourceWeight * budget_fractions(ev_.total(), ev_.budget());
  }

  int any_stage() { return static_cast<int>(rng_.below(static_cast<std::uint64_t>(ev_.stage_count()))); }

  // A stage that sets the bottleneck module's speed: the module itself or,
  // for a stream block / pool / add, one of the stages whose width feeds it.
  int bottleneck_stage() {
    const int b = ev_.bottleneck();
    const int s = ev_.stage_of_module(b);
    if (s >= 0) return s;
    const auto& src = ev_.width_sources(b);
    return src.empty() ? any_stage() : src[rng_.below(src.size())];
  }

  // A stage on the longest fill path (walking back from the output along
  // the producer that finishes filling last).
  int fill_path_stage() {
    path_ = ev_.fill_path_stages();
    return path_.empty() ? any_stage() : path_[rng_.below(path_.size())];
  }

  int pick_stage() {
    const double r = rng_.uniform();
    if (r < 0.5) return bottleneck_stage();
    if (r < 0.75 && objective_ == Objective::Latency) return fill_path_stage();
    return any_stage();
  }

  static std::int64_t& value(arch::Psi& p, int dim) { return dim == 0 ? p.p_in : dim == 1 ? p.p_out : p.fine; }

  const std::vector<std::int64_t>& legal(int s, int dim) const {
    const StageSlot& slot = ev_.slot(s);
    return dim == 0 ? slot.p_in : dim == 1 ? slot.p_out : slot.fine;
  }

  // The dimensions of stage s with a choice (a depthwise stage's p_out follows p_in).
  std::vector<int> dims(int s) const {
    std::vector<int> d;
    for (int dim = 0; dim < 3; ++dim)
      if (legal(s, dim).size() > 1) d.push_back(dim);
    return d;
  }

  // Moves dimension `dim` by `delta` positions in its legal list (clamped).
  void shift(int s, int dim, int delta, arch::Psi& p) const {
    const auto& l = legal(s, dim);
    const auto it = std::lower_bound(l.begin(), l.end(), value(p, dim));
    const auto i = static_cast<std::int64_t>(it - l.begin()) + delta;
    value(p, dim) =
        l[static_cast<std::size_t>(std::clamp<std::int64_t>(i, 0, static_cast<std::int64_t>(l.size()) - 1))];
  }

  bool memory_is_a_choice(int s, const arch::Psi& p) const {
    return arch::weight_memory_is_a_choice(ev_.slot(s).shape, p, ev_.bits(), ev_.device_has_uram());
  }

  // A legal ψ: a depthwise stage's p_out follows p_in; the weight memory is
  // Auto where it decides nothing, else explicit (Auto becomes the kind it
  // gives, so that a flip is a real change).
  void finish(int s, arch::Psi& p) const {
    if (ev_.slot(s).depthwise()) p.p_out = p.p_in;
    if (!memory_is_a_choice(s, p)) {
      p.weight_memory = arch::WeightMemory::Auto;
    } else if (p.weight_memory == arch::WeightMemory::Auto) {
      p.weight_memory = arch::auto_weight_memory(ev_.slot(s).shape, p, ev_.bits(), ev_.device_has_uram());
    }
  }

  arch::WeightMemory random_memory() {
    return rng_.uniform() < 0.5 ? arch::WeightMemory::Bram : arch::WeightMemory::Uram;
  }

  // One dimension of stage s by ±1 (sometimes ±2, ±3) values; `dir` 0 picks
  // the direction at random.
  bool step(int s, int dir, Change& c) {
    const auto d = dims(s);
    if (d.empty()) return false;
    arch::Psi p = ev_.psi(s);
    const int size = rng_.uniform() < 0.85 ? 1 : 2 + static_cast<int>(rng_.below(2));
    const int sign = dir != 0 ? dir : (rng_.uniform() < 0.5 ? 1 : -1);
    shift(s, d[rng_.below(d.size())], sign * size, p);
    finish(s, p);
    if (p == ev_.psi(s)) return false;
    c.emplace_back(s, p);
    return true;
  }

  // A random legal ψ of stage s whose own interval lies in [lo, hi]; false
  // after a few misses.
  bool random_psi(int s, std::int64_t lo, std::int64_t hi, arch::Psi& p) {
    const StageSlot& slot = ev_.slot(s);
    for (int k = 0; k < 8; ++k) {
      p = {slot.p_in[rng_.below(slot.p_in.size())], 1, slot.fine[rng_.below(slot.fine.size())]};
      p.p_out = slot.depthwise() ? p.p_in : slot.p_out[rng_.below(slot.p_out.size())];
      if (ev_.device_has_uram()) p.weight_memory = random_memory();
      finish(s, p);
      const std::int64_t iv = arch::stage_cycles(slot.shape, p).interval();
      if (iv >= lo && iv <= hi && p != ev_.psi(s)) return true;
    }
    return false;
  }

  // Steps one or two random other stages down, to pay for a raise.
  void pay(int except, Change& c) {
    const int payers = 1 + static_cast<int>(rng_.below(2));
    for (int k = 0; k < payers; ++k)
      if (const int down = any_stage(); down != except) step(down, -1, c);
  }

  void propose(Change& c) {
    const double r = rng_.uniform();
    if (r < 0.15) {  // trade: the bottleneck a step up, paid for elsewhere
      const int up = bottleneck_stage();
      if (step(up, +1, c)) pay(up, c);
      return;
    }
    if (r < 0.30) {  // faster: the bottleneck stage to a random faster ψ (at most 2x)
      const int s = bottleneck_stage();
      const std::int64_t now = ev_.module_interval(ev_.slot(s).module);
      arch::Psi p;
      if (!random_psi(s, now / 2, now - 1, p)) return;
      c.emplace_back(s, p);
      if (rng_.uniform() < 0.5) pay(s, c);
      return;
    }
    const int s = pick_stage();
    if (r < 0.40) {  // leaner: any ψ that keeps the design's interval
      arch::Psi p;
      if (random_psi(s, 0, ev_.interval(), p)) c.emplace_back(s, p);
      return;
    }
    if (r < 0.50) {  // jump
      arch::Psi p;
      if (random_psi(s, 0, std::numeric_limits<std::int64_t>::max(), p)) c.emplace_back(s, p);
      return;
    }
    if (r < 0.58 && ev_.device_has_uram()) {  // memory: the other kind
      arch::Psi p = ev_.psi(s);
      finish(s, p);
      if (p.weight_memory == arch::WeightMemory::Auto) return;  // not a choice at this ψ
      p.weight_memory =
          p.weight_memory == arch::WeightMemory::Bram ? arch::WeightMemory::Uram : arch::WeightMemory::Bram;
      c.emplace_back(s, p);
      return;
    }
    const auto d = dims(s);
    if (r < 0.70 && d.size() > 1) {  // refactor
      const int a = d[rng_.below(d.size())];
      int b = d[rng_.below(d.size())];
      while (b == a) b = d[rng_.below(d.size())];
      arch::Psi p = ev_.psi(s);
      shift(s, a, 1, p);
      shift(s, b, -1, p);
      finish(s, p);
      if (p != ev_.psi(s)) c.emplace_back(s, p);
      return;
    }
    step(s, 0, c);
  }

  Evaluator& ev_;
  Objective objective_;
  AnnealOptions o_;
  Rng rng_;
  std::vector<int> path_;
};

}  // namespace

void anneal(Evaluator& ev, Objective objective, const AnnealOptions& options) {
  Annealer(ev, objective, options).run();
}

}  // namespace mixtd::search::detail
