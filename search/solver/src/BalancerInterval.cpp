// Bottleneck balancing: the slowest module to its next faster legal ψ, one
// step or a batch at a time, with weight memories re-placed where a step
// fits nowhere (Balancer.h).
#include <algorithm>
#include <vector>

#include "Balancer.h"

namespace mixtd::search::detail {

// The slowest module is a stage: move it to its next faster legal ψ — the
// cheapest one with a lower interval, over all p_in / p_out / fine
// combinations (so a re-factoring is a step too) — trying the next
// cheapest while the whole design does not fit.
bool Balancer::improve_stage(int s) {
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

// Applies c and re-places every weight memory for it; kept if the design
// then fits and `accept` holds.
template <typename Accept>
bool Balancer::replace_weights(const Change& c, Accept accept) {
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
bool Balancer::widen_sources(int m) {
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

bool Balancer::improve(int m) {
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
void Balancer::balance_interval(std::vector<std::pair<std::size_t, std::int64_t>>* steps) {
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
int Balancer::batch_to(std::int64_t target) {
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

}  // namespace mixtd::search::detail
