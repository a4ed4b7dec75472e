// The starts of the default solver and how their answers are kept (Balancer.h).
#include "Balancer.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace mixtd::search::detail {

void Balancer::run() {
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
void Balancer::refine() {
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
  if (starts) {
    // The first start at the answer's latency is the one it came from:
    // run() keeps the balanced start on a tie with the early one, and a
    // narrow start replaces the best only when strictly lower.
    for (SolveStart& st : *starts)
      if (st.latency_cycles == best_latency) {
        st.kept = true;
        break;
      }
  }
}

}  // namespace mixtd::search::detail
