#include "StageOptions.h"

#include "Common.h"
#include "mixtd/arch/Resources.h"

namespace mixtd::search::detail {

StageOptions::TableCache& StageOptions::table_cache() {
  thread_local TableCache cache;
  return cache;
}

const Table& StageOptions::enumerate(int s) {
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

void StageOptions::build_table(int s, Table& table) {
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
    const arch::StageResources r = arch::stage_resources(slot.shape, o.psi, bits, w.placed, line_buffers[u.p_in_index]);
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
arch::Resources StageOptions::output_fifos(int m, std::int64_t w,
                                           std::vector<std::pair<std::int64_t, arch::Resources>>& cache) const {
  for (const auto& [width, r] : cache)
    if (width == w) return r;
  arch::Resources r;
  for (int st : ev_.module_outputs(m))
    r += arch::fifo_resources(ev_.stream_depth(st), w, ev_.bits()).scaled(static_cast<double>(ev_.stream_count(st)));
  cache.emplace_back(w, r);
  return r;
}

}  // namespace mixtd::search::detail
