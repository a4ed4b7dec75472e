#include "Evaluator.h"

#include <algorithm>
#include <numeric>

#include "mixtd/arch/Resources.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

namespace {

using arch::ModuleKind;

// As in Graph.cpp (host links take the widest divisor of the stream width
// their bandwidth allows).
std::int64_t largest_divisor_at_most(std::int64_t n, std::int64_t cap) {
  for (std::int64_t d = std::min(n, cap); d >= 1; --d)
    if (n % d == 0) return d;
  return 1;
}

std::size_t at(int i) { return static_cast<std::size_t>(i); }

// A regroup's output width from its input width (Graph.cpp's regroup()).
std::int64_t regroup_width(const arch::Module& gm, std::int64_t w) {
  std::int64_t wo = std::max<std::int64_t>(1, w * gm.ports_in / gm.ports_out);
  if (gm.out_shape.c % wo != 0) wo = std::gcd(wo, gm.out_shape.c);
  return wo;
}

}  // namespace

Evaluator::Evaluator(const arch::Design& d)
    : graph_(arch::build_graph(d)),
      bits_(d.bits),
      fifo_depth_(d.fifo_depth),
      host_words_(static_cast<std::int64_t>(d.device.host_words_per_cycle)),
      device_has_uram_(d.device.capacity.uram > 0),
      clock_mhz_(d.clock_mhz),
      budget_(d.device.capacity.scaled(d.budget)),
      rows_(graph_) {
  const auto& gm = graph_.modules;
  mods_.resize(gm.size());
  for (std::size_t i = 0; i < gm.size(); ++i) {
    const arch::Module& m = gm[i];
    Mod& e = mods_[i];
    e.kind = m.kind;
    e.count = m.count;
    e.inputs = m.inputs;
    e.outputs = m.outputs;
    e.width_out = m.width_out;
    e.cycles = m.cycles;
    e.res = m.resources.scaled(static_cast<double>(m.count));
    for (int s : m.inputs) e.producers.push_back(graph_.streams[at(s)].from);
    if (m.kind == ModuleKind::Stage) {
      StageSlot slot;
      slot.module = static_cast<int>(i);
      slot.layer = m.layer;
      slot.index = m.stage_index;
      slot.shape = m.shape;
      slot.p_in = arch::divisors(m.shape.depthwise ? m.shape.in_ch : m.shape.in_per_group());
      if (!m.shape.depthwise) slot.p_out = arch::divisors(m.shape.out_ch / m.shape.groups);
      slot.fine = arch::divisors(m.shape.kh * m.shape.kw);
      e.slot = static_cast<int>(slots_.size());
      slots_.push_back(std::move(slot));
      psi_.push_back(m.psi);
    }
    // Width sources: a stage is its own; other modules inherit their producers'.
    for (int p : e.producers) {
      const Mod& pm = mods_[at(p)];
      if (pm.slot >= 0) {
        e.sources.push_back(pm.slot);
      } else {
        e.sources.insert(e.sources.end(), pm.sources.begin(), pm.sources.end());
      }
    }
    std::sort(e.sources.begin(), e.sources.end());
    e.sources.erase(std::unique(e.sources.begin(), e.sources.end()), e.sources.end());
    if (m.kind == ModuleKind::EltwiseAdd && m.inputs.size() >= 2) adds_.push_back(static_cast<int>(i));
  }
  strs_.resize(graph_.streams.size());
  for (std::size_t i = 0; i < graph_.streams.size(); ++i) {
    const arch::Stream& s = graph_.streams[i];
    Str& e = strs_[i];
    e.from = s.from;
    e.to = s.to;
    e.count = s.count;
    e.words = s.words;
    e.width = s.width;
    e.depth = s.depth;
    e.read_width = arch::consumer_read_width(graph_.modules[at(s.to)]);
    e.res = s.resources;
    if (auto it = d.fifo_depths.find(s.name); it != d.fifo_depths.end()) e.override_depth = it->second;
    // The width rule below relies on this: a stream carries its producer's beats.
    if (s.width != mods_[at(s.from)].width_out)
      throw Error("internal: stream '" + s.name + "' is not its producer's width");
  }
  dirty_.assign(mods_.size(), 0);
  feeds_add_.assign(mods_.size(), 0);
  for (int a : adds_)
    for (int p : mods_[at(a)].producers) feeds_add_[at(p)] = 1;
  add_in_start_.push_back(0);
  for (int a : adds_) {
    for (int st : mods_[at(a)].inputs) {
      const int from = strs_[at(st)].from;
      const auto& out = graph_.modules[at(from)].out_shape;
      add_inputs_.push_back({st, from, std::max<std::int64_t>(1, out.h * out.w), out.w});
    }
    add_in_start_.push_back(static_cast<int>(add_inputs_.size()));
  }
  hot_.resize(mods_.size());
  cycles_moved_.assign(mods_.size(), 0);
  width_moved_.assign(mods_.size(), 0);
  shift_.resize(mods_.size());
  for (int m = 0; m < module_count(); ++m) sync_hot(m);
  mod_saved_.assign(mods_.size(), 0);
  str_saved_.assign(strs_.size(), 0);
  psi_saved_.assign(psi_.size(), 0);
  // Producers as one flat array, for the fill pass that runs on every change.
  prod_start_.push_back(0);
  for (const auto& m : mods_) {
    prod_list_.insert(prod_list_.end(), m.producers.begin(), m.producers.end());
    prod_start_.push_back(static_cast<int>(prod_list_.size()));
  }
  // Cuts: the earliest producer of any later module is not before it.
  cut_.assign(mods_.size(), 0);
  int earliest = module_count();
  for (int m = module_count(); m-- > 0;) {
    cut_[at(m)] = earliest >= m;
    for (int p : mods_[at(m)].producers) earliest = std::min(earliest, p);
  }
  for (const auto& m : mods_) total_ += m.res;
  for (const auto& s : strs_) total_ += s.res;
  recompute_fills(0, true);
  recompute_interval();
}

std::int64_t Evaluator::module_width_in(int m) const {
  std::int64_t w = 0;
  for (int s : mods_[at(m)].inputs) w = w == 0 ? strs_[at(s)].width : std::min(w, strs_[at(s)].width);
  return w;
}

void Evaluator::set_module_resources(int m, const arch::Resources& per_instance) {
  Mod& e = mods_[at(m)];
  total_ += e.res.scaled(-1.0);
  e.res = per_instance.scaled(static_cast<double>(e.count));
  total_ += e.res;
}

void Evaluator::set_stream(int s, std::int64_t width, std::int64_t depth) {
  Str& e = strs_[at(s)];
  const std::int64_t read = consumer_read_width(e.to);
  if (e.width == width && e.depth == depth && e.read_width == read) return;
  save_stream(s);
  e.width = width;
  e.depth = depth;
  e.read_width = read;
  total_ += e.res.scaled(-1.0);
  // arch::physical_stream_resources, with the FIFO memoised.
  arch::Resources one = fifo_cost(depth, width);
  if (arch::reads_another_width(width, read)) one += arch::repack_resources(width, read);
  e.res = one.scaled(static_cast<double>(e.count));
  total_ += e.res;
}

std::int64_t Evaluator::consumer_read_width(int m) const {
  const Mod& c = mods_[at(m)];
  switch (c.kind) {
    case ModuleKind::HostOut:
      return 0;
    case ModuleKind::Stage:
      return psi_[at(c.slot)].p_in;
    case ModuleKind::EltwiseAdd: {
      std::int64_t wide = 1;
      for (int s : c.inputs) wide = std::max(wide, strs_[at(s)].width);
      return wide;
    }
    default:
      return c.inputs.empty() ? 0 : strs_[at(c.inputs[0])].width;
  }
}

void Evaluator::reprice_inputs(int m) {
  for (int s : mods_[at(m)].inputs) set_stream(s, strs_[at(s)].width, strs_[at(s)].depth);
}

const arch::Resources& Evaluator::fifo_cost(std::int64_t depth, std::int64_t width) {
  const auto key = static_cast<std::uint64_t>(depth) * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(width);
  FifoMemo& memo = fifo_memo_[at(static_cast<int>((key * 0xff51afd7ed558ccdULL) >> (64 - kFifoMemoBits)))];
  if (memo.depth != depth || memo.width != width) {
    memo.depth = depth;
    memo.width = width;
    memo.res = arch::fifo_resources(depth, width, bits_);
  }
  return memo.res;
}

void Evaluator::recompute_stage(int m) {
  Mod& e = mods_[at(m)];
  const StageSlot& slot = slots_[at(e.slot)];
  const arch::Psi& p = psi_[at(e.slot)];
  const std::uint64_t key = (static_cast<std::uint64_t>(e.slot) * 0x9e3779b97f4a7c15ULL) ^
                            (static_cast<std::uint64_t>(p.p_in) << 40) ^ (static_cast<std::uint64_t>(p.p_out) << 20) ^
                            (static_cast<std::uint64_t>(p.fine) << 4) ^ static_cast<std::uint64_t>(p.weight_memory);
  StageMemo& memo = stage_memo_[at(static_cast<int>((key * 0xff51afd7ed558ccdULL) >> (64 - kStageMemoBits)))];
  if (memo.slot != e.slot || !(memo.psi == p)) {
    memo.slot = e.slot;
    memo.psi = p;
    memo.cycles = arch::stage_cycles(slot.shape, p);
    memo.total = arch::stage_resources(slot.shape, p, bits_, device_has_uram_).total;
  }
  e.cycles = memo.cycles;
  sync_hot(m);
  e.width_out = slot.shape.depthwise ? p.p_in : p.p_out;
  set_module_resources(m, memo.total);
  reprice_inputs(m);  // p_in is what the input streams' repacks re-pack to
}

// Each case mirrors the corresponding builder in arch/src/Graph.cpp.
bool Evaluator::recompute_module(int m) {
  save_module(m);
  Mod& e = mods_[at(m)];
  const arch::Module& gm = graph_.modules[at(m)];
  const std::int64_t before = e.width_out;
  const std::int64_t w = e.inputs.empty() ? e.width_out : strs_[at(e.inputs[0])].width;
  arch::Resources r;
  switch (e.kind) {
    case ModuleKind::HostIn:
      return false;  // fixed by the device
    case ModuleKind::Stage:
      recompute_stage(m);
      return e.width_out != before;
    case ModuleKind::HostOut:
      e.cycles = arch::stream_cycles(gm.words_in, largest_divisor_at_most(w, host_words_), 0, 1);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
    case ModuleKind::Split:
    case ModuleKind::Merge:
    case ModuleKind::RoundRobin: {
      const std::int64_t wo = regroup_width(gm, w);
      e.width_out = wo;
      e.cycles = arch::stream_cycles(gm.words_in, w, gm.words_out, wo);
      r = arch::stream_module_resources(gm, w, wo, bits_, fifo_depth_);
      break;
    }
    case ModuleKind::Fork:
      e.width_out = w;
      e.cycles = arch::stream_cycles(gm.words_in, w, gm.words_out, w);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
    case ModuleKind::GroupAdd:
      e.width_out = w;
      e.cycles = arch::stream_cycles(gm.words_in, w, gm.words_out, w);
      arch::add_requantiser(e.cycles);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
    case ModuleKind::EltwiseAdd: {
      std::int64_t wide = 1, in_cycles = 0;
      for (int s : e.inputs) {
        wide = std::max(wide, strs_[at(s)].width);
        in_cycles = std::max(in_cycles, arch::ceil_div(gm.words_in, strs_[at(s)].width));
      }
      e.width_out = wide;
      e.cycles = arch::stream_cycles(gm.words_in, wide, gm.words_out, wide);
      e.cycles.in = in_cycles;
      arch::add_requantiser(e.cycles);
      r = arch::stream_module_resources(gm, wide, wide, bits_, fifo_depth_);
      break;
    }
    case ModuleKind::MaxPool:
    case ModuleKind::AvgPool:
      e.width_out = w;
      e.cycles = arch::pool_cycles(gm.in_shape, gm.out_shape, gm.pool.kh, gm.pool.kw, gm.pool.ph, gm.pool.pw, w);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
    case ModuleKind::GlobalAvgPool:
      e.width_out = w;
      e.cycles = arch::global_pool_cycles(gm.in_shape, w);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
    case ModuleKind::ReLU:
      e.width_out = w;
      e.cycles = arch::stream_cycles(gm.words_in, w, gm.words_out, w);
      r = arch::stream_module_resources(gm, w, w, bits_, fifo_depth_);
      break;
  }
  sync_hot(m);
  set_module_resources(m, r);
  reprice_inputs(m);
  return e.width_out != before;
}

void Evaluator::store_psi(int s, const arch::Psi& p) {
  arch::Psi q = p;
  if (slots_[at(s)].shape.depthwise) q.p_out = q.p_in;
  if (const Savepoint* t = open_trial(); t && psi_saved_[at(s)] != t->id) {
    psi_saved_[at(s)] = t->id;
    psi_log_.emplace_back(s, psi_[at(s)]);
  }
  psi_[at(s)] = q;
}

void Evaluator::set_psi(int s, const arch::Psi& p) {
  store_psi(s, p);
  const int m = slots_[at(s)].module;
  dirty_[at(m)] = 1;
  propagate(m, m);
}

void Evaluator::set_psis(const std::vector<std::pair<int, arch::Psi>>& changes) {
  if (changes.empty()) return;
  int first = module_count(), last = -1;
  for (const auto& [s, p] : changes) {
    store_psi(s, p);
    const int m = slots_[at(s)].module;
    dirty_[at(m)] = 1;
    first = std::min(first, m);
    last = std::max(last, m);
  }
  propagate(first, last);
}

void Evaluator::set_all(const std::vector<arch::Psi>& psis) {
  require(psis.size() == psi_.size(), "internal: set_all with the wrong number of stages");
  require(depth_ == 0, "internal: set_all inside a trial");
  for (std::size_t s = 0; s < psis.size(); ++s) {
    psi_[s] = psis[s];
    if (slots_[s].shape.depthwise) psi_[s].p_out = psi_[s].p_in;
  }
  for (int m = 0; m < module_count(); ++m) {
    recompute_module(m);
    for (int o : mods_[at(m)].outputs) set_stream(o, mods_[at(m)].width_out, strs_[at(o)].depth);
  }
  recompute_fills(0, true);
  size_skip_fifos(0, true);
  recompute_interval();
  // Re-sum the total in analyse()'s order rather than trust the deltas.
  total_ = {};
  for (const auto& m : mods_) total_ += m.res;
  for (const auto& st : strs_) total_ += st.res;
  ++evaluations_;
}

// Only the dirty modules, and downstream of them what their output widths
// reach, change; the sweep follows topological order so inputs are final
// first.
void Evaluator::propagate(int first, int last) {
  int last_dirty = last;
  touched_.clear();
  interval_moved_.clear();
  for (int m : moved_) cycles_moved_[at(m)] = 0;
  moved_.clear();
  for (int m : widened_) width_moved_[at(m)] = 0;
  widened_.clear();
  fill_moved_ = false;
  for (int i = first; i <= last_dirty; ++i) {
    if (!dirty_[at(i)]) continue;
    dirty_[at(i)] = 0;
    touched_.push_back(i);
    if (!recompute_module(i)) continue;
    width_moved_[at(i)] = 1;
    widened_.push_back(i);
    for (int o : mods_[at(i)].outputs) {
      set_stream(o, mods_[at(i)].width_out, strs_[at(o)].depth);
      const int to = strs_[at(o)].to;
      // A stage's own numbers do not depend on its input width (its port
      // re-packs beats), so the change stops there.
      if (mods_[at(to)].kind == ModuleKind::Stage) continue;
      dirty_[at(to)] = 1;
      last_dirty = std::max(last_dirty, to);
    }
  }
  // Fills follow only the modules' own fills: a change that moved none
  // (say a wider p_out into another stage) leaves every fill as it was.
  shift_from_ = tail_from_ = module_count();  // no shifts unless the fills are recomputed
  if (fill_moved_) recompute_fills(first);
  // Skip-FIFO depths follow the fills and the add inputs' producers (their
  // interval and width); if neither moved they stand.
  bool adds_moved = fill_moved_;
  for (int t : touched_) adds_moved = adds_moved || feeds_add_[at(t)];
  if (adds_moved) size_skip_fifos(first);
  update_interval();
  ++evaluations_;
}

// Fills before `from_module` cannot change: only it and what follows moved.
void Evaluator::recompute_fills(int from_module, bool all) {
  fill_.resize(mods_.size());
  for (std::size_t k = 0; k < depth_; ++k) {
    Savepoint& t = trials_[k];
    if (at(from_module) >= t.fill_from) continue;
    if (t.fills.size() != mods_.size()) t.fills.resize(mods_.size());
    std::copy(fill_.begin() + from_module, fill_.begin() + static_cast<std::ptrdiff_t>(t.fill_from),
              t.fills.begin() + from_module);
    t.fill_from = at(from_module);
  }
  shift_from_ = from_module;
  tail_from_ = module_count();
  int last_moved = -1;
  for (int m : moved_) last_moved = std::max(last_moved, m);
  for (std::size_t i = at(from_module); i < mods_.size(); ++i) {
    // The merged input now (arch::arrival() merges in place, no copies).
    arch::Arrival in;
    for (int k = prod_start_[i]; k < prod_start_[i + 1]; ++k) arch::merge_arrival(in, fill_[at(prod_list_[at(k)])]);
    if (!all && !cycles_moved_[i]) {
      // The merged input before this pass, from the inputs' shifts.
      arch::Arrival was_in;
      for (int k = prod_start_[i]; k < prod_start_[i + 1]; ++k) {
        const int p = prod_list_[at(k)];
        const arch::Arrival& a = fill_[at(p)];
        const Shift& x = shift_of(p);
        arch::merge_arrival(was_in,
                            {a.first - x.first, a.last - x.last, x.lead ? a.lead : x.old_lead, a.fill - x.fill});
      }
      if (in.first - was_in.first == in.last - was_in.last && in.lead == was_in.lead) {
        Shift& sh = shift_[i];
        sh.first = sh.last = in.first - was_in.first;
        sh.fill = in.fill - was_in.fill;
        sh.lead = true;
        arch::Arrival& a = fill_[i];
        a.first += sh.first;
        a.last += sh.last;
        a.fill += sh.fill;
        if (cut_[i] && static_cast<int>(i) > last_moved) {
          shift_tail(i, sh);
          return;
        }
        continue;
      }
    }
    const arch::Arrival a = arch::arrival_after(hot_[i].cycles, in);
    // Field by field: a whole-struct copy of `a` reads back what was just
    // stored in halves, which stalls.
    arch::Arrival& was = fill_[i];
    Shift& sh = shift_[i];
    sh.first = a.first - was.first;
    sh.last = a.last - was.last;
    sh.fill = a.fill - was.fill;
    sh.lead = a.lead == was.lead;
    sh.old_lead = was.lead;
    was.first = a.first;
    was.last = a.last;
    was.lead = a.lead;
    was.fill = a.fill;
    if (!all && cut_[i] && static_cast<int>(i) > last_moved && sh.uniform()) {
      shift_tail(i, sh);
      return;
    }
  }
}

// Every module after the cut `m`, whose shift is `sh` (uniform), shifts by it.
void Evaluator::shift_tail(std::size_t m, const Shift& sh) {
  tail_from_ = static_cast<int>(m) + 1;
  tail_ = sh;
  if (sh.first == 0 && sh.fill == 0) return;
  for (std::size_t j = m + 1; j < fill_.size(); ++j) {
    fill_[j].first += sh.first;
    fill_[j].last += sh.first;
    fill_[j].fill += sh.fill;
  }
}

// As Graph.cpp's size_skip_fifos: the earlier input of an add buffers what
// its producer emits while the later path fills; design overrides win.
// Adds before `from_module` see only fills and intervals that did not change.
void Evaluator::size_skip_fifos(int from_module, bool all) {
  // The adds in the shifted tail take their inputs from the cut on, which
  // all shifted alike: if no width moved there, their depths stand.
  int last_widened = -1;
  for (int m : widened_) last_widened = std::max(last_widened, m);
  const bool tail_stands = !all && tail_from_ - 1 > last_widened;
  for (std::size_t k = 0; k < adds_.size(); ++k) {
    if (adds_[k] < from_module) continue;
    if (tail_stands && adds_[k] >= tail_from_) break;
    const AddInput* begin = add_inputs_.data() + add_in_start_[k];
    const AddInput* end = add_inputs_.data() + add_in_start_[k + 1];
    if (!all) {
      // Inputs of the same width, shifted alike: the depths stand.
      const Shift* common = nullptr;
      bool alike = true;
      for (const AddInput* x = begin; x != end && alike; ++x) {
        const Shift& sh = shift_of(x->from);
        alike = !width_moved_[at(x->from)] && sh.uniform() && (!common || sh.first == common->first);
        common = &sh;
      }
      if (alike) continue;
    }
    arch::Arrival main;
    for (const AddInput* x = begin; x != end; ++x) {
      const arch::Arrival& a = fill_[at(x->from)];
      if (a.first > main.first) main = a;
    }
    for (const AddInput* x = begin; x != end; ++x) {
      const Str& st = strs_[at(x->stream)];
      std::int64_t depth = st.override_depth;
      if (depth <= 0) {
        depth = arch::skip_fifo_depth(fill_[at(x->from)], main, st.words, st.width, x->pixels, fifo_depth_, x->row);
        if (depth == 0) depth = fifo_depth_;
      }
      set_stream(x->stream, st.width, depth);
    }
  }
}

// The interval is kept in a tournament tree over the modules' intervals
// (each node the first module with the largest interval below it), so a
// change costs log(modules) per touched module instead of a scan.
inline int Evaluator::slower(int a, int b) const {
  if (a < 0) return b;
  if (b < 0) return a;
  const std::int64_t ia = hot_[at(a)].interval, ib = hot_[at(b)].interval;
  return ia > ib || (ia == ib && a < b) ? a : b;
}

void Evaluator::read_top() {
  const int top = tree_[1];
  interval_ = top < 0 ? 0 : hot_[at(top)].interval;
  bottleneck_ = interval_ > 0 ? top : -1;  // as analyse(): none if every interval is 0
}

void Evaluator::recompute_interval() {
  std::size_t leaves = 1;
  while (leaves < mods_.size()) leaves *= 2;
  tree_.assign(2 * leaves, -1);
  for (std::size_t i = 0; i < mods_.size(); ++i) tree_[leaves + i] = static_cast<int>(i);
  for (std::size_t n = leaves; n-- > 1;) tree_[n] = slower(tree_[2 * n], tree_[2 * n + 1]);
  interval_moved_.clear();
  read_top();
}

void Evaluator::update_interval() {
  refresh_moved_intervals();
  read_top();
}

// Only the modules whose interval moved can change the tree.
void Evaluator::refresh_moved_intervals() {
  if (interval_moved_.empty()) return;
  if (!std::is_sorted(interval_moved_.begin(), interval_moved_.end())) {
    std::sort(interval_moved_.begin(), interval_moved_.end());
  }
  interval_moved_.erase(std::unique(interval_moved_.begin(), interval_moved_.end()), interval_moved_.end());
  tree_refresh(interval_moved_);
}

void Evaluator::tree_refresh(const std::vector<int>& changed) {
  if (tree_mark_.size() != mods_.size()) tree_mark_.assign(mods_.size(), 0);
  ++tree_pass_;
  const std::size_t leaves = tree_.size() / 2;
  tree_level_.clear();
  for (int m : changed) {
    tree_mark_[at(m)] = tree_pass_;
    const int n = static_cast<int>((leaves + at(m)) / 2);
    if (tree_level_.empty() || tree_level_.back() != n) tree_level_.push_back(n);
  }
  while (!tree_level_.empty()) {
    tree_next_.clear();
    for (int n : tree_level_) {
      const int was = tree_[at(n)];
      const int now = slower(tree_[2 * at(n)], tree_[2 * at(n) + 1]);
      tree_[at(n)] = now;
      // The parent sees a new winner, or the same one with a moved interval.
      if (n > 1 && (now != was || (now >= 0 && tree_mark_[at(now)] == tree_pass_)) &&
          (tree_next_.empty() || tree_next_.back() != n / 2))
        tree_next_.push_back(n / 2);
    }
    std::swap(tree_level_, tree_next_);
  }
}

std::int64_t Evaluator::width_in_if(int target, int s, std::int64_t w) const {
  const int src = slots_[at(s)].module;
  std::vector<std::pair<int, std::int64_t>> changed{{src, w}};
  auto width_of = [&](int m) {
    for (const auto& [k, v] : changed)
      if (k == m) return v;
    return mods_[at(m)].width_out;
  };
  auto touched = [&](int m) {
    for (int p : mods_[at(m)].producers)
      for (const auto& [k, v] : changed)
        if (k == p) return true;
    return false;
  };
  for (int i = src + 1; i < target; ++i) {
    const Mod& e = mods_[at(i)];
    if (e.kind == ModuleKind::Stage || e.kind == ModuleKind::HostIn || e.kind == ModuleKind::HostOut || !touched(i))
      continue;
    std::int64_t wo = width_of(e.producers[0]);
    if (e.kind == ModuleKind::EltwiseAdd)
      for (int p : e.producers) wo = std::max(wo, width_of(p));
    if (e.kind == ModuleKind::Split || e.kind == ModuleKind::Merge || e.kind == ModuleKind::RoundRobin)
      wo = regroup_width(graph_.modules[at(i)], wo);
    if (wo != e.width_out) changed.emplace_back(i, wo);
  }
  std::int64_t in = 0;
  for (int p : mods_[at(target)].producers) in = in == 0 ? width_of(p) : std::min(in, width_of(p));
  return in;
}

std::int64_t Evaluator::pool_fill_at(int m, std::int64_t width) const {
  const arch::Module& gm = graph_.modules[at(m)];
  if (gm.kind == ModuleKind::GlobalAvgPool) return arch::global_pool_cycles(gm.in_shape, width).fill;
  return arch::pool_cycles(gm.in_shape, gm.out_shape, gm.pool.kh, gm.pool.kw, gm.pool.ph, gm.pool.pw, width).fill;
}

void Evaluator::sync_hot(int m) {
  const arch::Cycles& c = mods_[at(m)].cycles;
  if (!(hot_[at(m)].cycles == c)) {
    rows_.set_cycles(m, c);
    fill_moved_ = true;
    if (!cycles_moved_[at(m)]) {
      cycles_moved_[at(m)] = 1;
      moved_.push_back(m);
    }
  }
  const std::int64_t interval = c.interval();
  if (hot_[at(m)].interval != interval) interval_moved_.push_back(m);
  hot_[at(m)] = {c, interval};
}

void Evaluator::save_module(int m) {
  const Savepoint* t = open_trial();
  if (!t || mod_saved_[at(m)] == t->id) return;
  mod_saved_[at(m)] = t->id;
  const Mod& e = mods_[at(m)];
  mod_log_.push_back({m, e.width_out, e.cycles, e.res});
}

void Evaluator::save_stream(int s) {
  const Savepoint* t = open_trial();
  if (!t || str_saved_[at(s)] == t->id) return;
  str_saved_[at(s)] = t->id;
  const Str& e = strs_[at(s)];
  str_log_.push_back({s, e.width, e.depth, e.read_width, e.res});
}

void Evaluator::begin_trial() {
  if (depth_ == trials_.size()) trials_.emplace_back();
  Savepoint& t = trials_[depth_++];  // its fills buffer is reused
  t.id = next_trial_++;
  t.mods = mod_log_.size();
  t.strs = str_log_.size();
  t.psis = psi_log_.size();
  t.fill_from = mods_.size();
  t.interval = interval_;
  t.bottleneck = bottleneck_;
  t.total = total_;
  rows_.begin_trial();
}

void Evaluator::rollback() {
  require(depth_ > 0, "internal: rollback without a trial");
  Savepoint& t = trials_[depth_ - 1];
  interval_moved_.clear();
  for (std::size_t i = mod_log_.size(); i-- > t.mods;) {
    const ModState& st = mod_log_[i];
    Mod& e = mods_[at(st.m)];
    e.width_out = st.width_out;
    e.cycles = st.cycles;
    e.res = st.res;
    sync_hot(st.m);
  }
  refresh_moved_intervals();
  for (std::size_t i = str_log_.size(); i-- > t.strs;) {
    const StrState& st = str_log_[i];
    Str& e = strs_[at(st.s)];
    e.width = st.width;
    e.depth = st.depth;
    e.read_width = st.read_width;
    e.res = st.res;
  }
  for (std::size_t i = psi_log_.size(); i-- > t.psis;) psi_[at(psi_log_[i].first)] = psi_log_[i].second;
  if (t.fill_from < mods_.size())
    std::copy(t.fills.begin() + static_cast<std::ptrdiff_t>(t.fill_from), t.fills.end(),
              fill_.begin() + static_cast<std::ptrdiff_t>(t.fill_from));
  interval_ = t.interval;
  bottleneck_ = t.bottleneck;
  total_ = t.total;
  mod_log_.resize(t.mods);
  str_log_.resize(t.strs);
  psi_log_.resize(t.psis);
  // After sync_hot() gave the row timeline its Cycles back: its rows as
  // they were, without recomputing them.
  rows_.rollback();
  --depth_;
}

// The enclosing trial (if any) keeps the log entries and still needs the
// fills as they were when it began: those it has not saved yet are the
// inner trial's saved ones.
void Evaluator::commit() {
  require(depth_ > 0, "internal: commit without a trial");
  const Savepoint& inner = trials_[--depth_];
  rows_.commit();
  if (depth_ == 0) {
    mod_log_.clear();
    str_log_.clear();
    psi_log_.clear();
    return;
  }
  Savepoint& outer = trials_[depth_ - 1];
  if (inner.fill_from < outer.fill_from) {
    if (outer.fills.size() != mods_.size()) outer.fills.resize(mods_.size());
    std::copy(inner.fills.begin() + static_cast<std::ptrdiff_t>(inner.fill_from),
              inner.fills.begin() + static_cast<std::ptrdiff_t>(outer.fill_from),
              outer.fills.begin() + static_cast<std::ptrdiff_t>(inner.fill_from));
    outer.fill_from = inner.fill_from;
  }
}

void Evaluator::apply(arch::Design& d) const {
  for (std::size_t s = 0; s < slots_.size(); ++s)
    d.layers.at(slots_[s].layer).stages.at(static_cast<std::size_t>(slots_[s].index)) = psi_[s];
}

}  // namespace mixtd::search::detail
