#include "mixtd/arch/RowTimeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mixtd/support/Error.h"

namespace mixtd::arch {

namespace {

// How module m walks its input: kernel, stride and padding of its window
// (1×1, stride 1 for blocks that map row r to row r).
struct Window {
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool whole_frame = false;  // global pool
};

Window window_of(const Module& m) {
  Window w;
  switch (m.kind) {
    case ModuleKind::Stage:
      w = {m.shape.kh, m.shape.kw, m.shape.sh, m.shape.sw, m.shape.ph, m.shape.pw, false};
      break;
    case ModuleKind::MaxPool:
    case ModuleKind::AvgPool:
      w = {m.pool.kh, m.pool.kw, m.pool.sh, m.pool.sw, m.pool.ph, m.pool.pw, false};
      break;
    case ModuleKind::GlobalAvgPool:
      w.whole_frame = true;
      break;
    default:
      break;
  }
  return w;
}

}  // namespace

RowTimelineTracker::RowTimelineTracker(const Graph& g, int frames, double period, bool keep_intake)
    : frames_(std::max(frames, 1)),
      period_(static_cast<std::int64_t>(std::llround(period * static_cast<double>(kRowTimeUnit)))),
      keep_intake_(keep_intake) {
  mods_.resize(g.modules.size());
  for (std::size_t mi = 0; mi < g.modules.size(); ++mi) {
    const Module& m = g.modules[mi];
    Mod& o = mods_[mi];
    o.kind = m.kind;
    o.H = std::max<std::int64_t>(1, m.in_shape.h);
    o.W = std::max<std::int64_t>(1, m.in_shape.w);
    o.Ho = std::max<std::int64_t>(1, m.out_shape.h);
    o.Wo = std::max<std::int64_t>(1, m.out_shape.w);
    const Window w = window_of(m);
    o.whole_frame = w.whole_frame;
    const bool streaming = m.kind != ModuleKind::Stage && m.kind != ModuleKind::MaxPool &&
                           m.kind != ModuleKind::AvgPool && m.kind != ModuleKind::GlobalAvgPool;
    // Output row i needs input row min(H−1, i·sh − ph + kh − 1); of that
    // row, the columns the first and the last window of an output row
    // reach (of W). A streaming block forwards beat by beat: its first
    // output follows its first input beat, not a whole pixel.
    o.need.resize(static_cast<std::size_t>(o.Ho));
    for (std::int64_t i = 0; i < o.Ho; ++i)
      o.need[static_cast<std::size_t>(i)] =
          w.whole_frame ? o.H - 1 : std::clamp<std::int64_t>(i * w.sh - w.ph + w.kh - 1, 0, o.H - 1);
    const std::int64_t first_cols = std::clamp<std::int64_t>(w.kw - w.pw, 1, o.W);
    const std::int64_t last_cols = std::clamp<std::int64_t>((o.Wo - 1) * w.sw - w.pw + w.kw, 1, o.W);
    o.first_at = Fraction(w.whole_frame ? 1.0
                          : streaming   ? 0.0
                                        : static_cast<double>(first_cols) / static_cast<double>(o.W));
    o.last_at = Fraction(w.whole_frame ? 1.0 : static_cast<double>(last_cols) / static_cast<double>(o.W));
    for (int s : m.inputs) o.producers.push_back(g.streams[static_cast<std::size_t>(s)].from);
    for (int p : o.producers)
      o.whole_rows =
          o.whole_rows && std::max<std::int64_t>(1, g.modules[static_cast<std::size_t>(p)].out_shape.h) >= o.H;
    o.first.assign(static_cast<std::size_t>(frames_ * o.Ho), 0);
    o.last.assign(o.first.size(), 0);
    o.cycles = m.cycles;
    o.key = key_of(static_cast<int>(mi), o.cycles);
    key_ ^= o.key;
    queue(static_cast<int>(mi));
  }
  for (std::size_t mi = 0; mi < mods_.size(); ++mi)
    for (int p : mods_[mi].producers) {
      require(static_cast<std::size_t>(p) < mi, "internal: the row timeline needs modules in topological order");
      mods_[static_cast<std::size_t>(p)].consumers.push_back(static_cast<int>(mi));
    }
  host_in_ = g.find("host_in");
  host_out_ = g.find("host_out");
}

void RowTimelineTracker::recompute() {
  int hi = -1, lo = static_cast<int>(mods_.size());
  for (int i : pending_) lo = std::min(lo, i), hi = std::max(hi, i);
  for (int i = lo; i <= hi; ++i) {
    Mod& m = mods_[static_cast<std::size_t>(i)];
    if (m.queued_pass != pass_) continue;
    // Every input shifted alike: so does this module, exactly.
    bool any = false, uniform = m.whole_rows;
    std::int64_t shift = 0;
    for (std::size_t k = 0; k < m.producers.size(); ++k) {
      const Mod& p = mods_[static_cast<std::size_t>(m.producers[k])];
      const Moved pm = p.moved_pass == pass_ ? p.moved : Moved::No;
      const std::int64_t d = pm == Moved::Shifted ? p.shift : 0;
      any = any || pm != Moved::No;
      if (pm == Moved::Yes || (k > 0 && d != shift)) uniform = false;
      shift = d;
    }
    if (!m.ever || !(m.cycles == m.computed)) {
      compute(m);
    } else if (!any) {
      m.moved = Moved::No;
    } else if (uniform) {
      if (depth_ > 0 && m.offset_saved != trials_[depth_ - 1].id) save(i, false);
      m.offset += shift;
      m.moved = Moved::Shifted;
      m.shift = shift;
    } else {
      compute(m);
    }
    m.moved_pass = pass_;
    if (m.moved != Moved::No)
      for (int c : m.consumers) {
        Mod& x = mods_[static_cast<std::size_t>(c)];
        if (x.queued_pass == pass_) continue;
        x.queued_pass = pass_;
        hi = std::max(hi, c);
      }
  }
  pending_.clear();
  ++pass_;
  if (host_in_ >= 0 && host_out_ >= 0) {
    const Mod& a = mods_[static_cast<std::size_t>(host_in_)];
    const Mod& b = mods_[static_cast<std::size_t>(host_out_)];
    const std::int64_t span = b.last[static_cast<std::size_t>(b.Ho - 1)] + b.offset - (a.first[0] + a.offset);
    latency_ = span <= 0 ? 0 : (span + kRowTimeUnit - 1) / kRowTimeUnit;
  }
  if (memo_.size() >= kMemoLimit) memo_.clear();
  memo_.emplace(key_, latency_);
  answered_ = false;
}

RowTimelineTracker::Key RowTimelineTracker::key_of(int m, const Cycles& c) {
  // wyhash's folded multiply over pairs of fields, twice with other
  // constants (the digits of pi): 2 × 4 multiplies where a hash per field
  // took 14 (set_cycles() runs on every change a search measures).
  auto mum = [](std::uint64_t a, std::uint64_t b) {
    const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
    return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
  };
  auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  auto hash = [&](const std::uint64_t* k) {
    const std::uint64_t x = mum(u(c.in) ^ k[0], u(c.compute) ^ k[1]);
    const std::uint64_t y = mum(u(c.out) ^ k[2], u(c.fill) ^ k[3]);
    const std::uint64_t z = mum(u(c.window) ^ k[4], u(c.tail) ^ k[5]);
    return mum(x ^ z ^ k[6], y ^ (u(m) * k[7]));
  };
  static constexpr std::uint64_t kA[] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                                         0x082efa98ec4e6c89ULL, 0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL,
                                         0xc0ac29b7c97c50ddULL, 0x3f84d5b5b5470917ULL};
  static constexpr std::uint64_t kB[] = {0x9216d5d98979fb1bULL, 0xd1310ba698dfb5acULL, 0x2ffd72dbd01adfb7ULL,
                                         0xb8e1afed6a267e96ULL, 0xba7c9045f12c7f99ULL, 0x24a19947b3916cf7ULL,
                                         0x0801f2e2858efc16ULL, 0x636920d871574e69ULL};
  return {hash(kA), hash(kB)};
}

void RowTimelineTracker::compute(Mod& m) {
  ++module_updates_;
  const Cycles old_computed = m.computed;
  const bool old_ever = m.ever;
  m.computed = m.cycles;
  m.ever = true;
  constexpr std::int64_t U = kRowTimeUnit;
  const Cycles& c = m.cycles;
  const std::int64_t H = m.H, W = m.W, Ho = m.Ho, Wo = m.Wo;
  const int frames = frames_;
  // Per row and per pixel, fixed point (rounded down).
  const std::int64_t row_in = c.in * U / H, pixel_in = c.in * U / (H * W);
  const std::int64_t busy = std::max(c.compute, c.out);
  const std::int64_t row_out = busy * U / Ho, pixel_out = busy * U / (Ho * Wo);
  // One output beat's share of the busy time (`out` is the frame's output
  // beats, one a cycle): a pixel's beats leave through its compute (a
  // stage's output blocks one after another), so a row's last beat is one
  // beat, not one pixel, before the row's end. Not for a global pool: it
  // computes while its frame streams in and emits its beats at the end (its
  // rule is the tail), so it keeps the one pixel.
  const std::int64_t beat_out = c.out > 0 && !m.whole_frame ? busy * U / c.out : pixel_out;
  std::vector<std::int64_t>& of = new_first_;
  std::vector<std::int64_t>& ol = new_last_;
  // Every row is written below (no need to clear them first).
  of.resize(static_cast<std::size_t>(frames * Ho));
  ol.resize(of.size());

  if (m.kind == ModuleKind::HostIn) {
    for (int f = 0; f < frames; ++f) {
      const std::int64_t start = std::max(f * period_, f > 0 ? ol[static_cast<std::size_t>(f * Ho - 1)] : 0);
      for (std::int64_t r = 0; r < Ho; ++r) {
        const auto i = static_cast<std::size_t>(f * Ho + r);
        of[i] = start + r * row_out;
        ol[i] = of[i] + row_out - U;
      }
    }
  } else {
    // The input rows as this module takes them: the latest of its inputs'
    // rows (an add waits for both), at no more than its own input rate.
    // (Times are never negative, so the 0 these start from binds only
    // where a producer has fewer rows than this module reads: see
    // whole_rows.)
    constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min() / 4;
    const auto rows_in = static_cast<std::size_t>(frames * H);
    const Mod* only = m.producers.size() == 1 ? &mods_[static_cast<std::size_t>(m.producers[0])] : nullptr;
    const std::int64_t first_delay = (c.fill - c.window) * U;
    const std::int64_t tail = c.tail * U;
    // The point `fraction` of the way through an input row from its first
    // word a to its last b: a function of the row's length only, so
    // shifting the row shifts it exactly (a multiply, not a division: this
    // loop is the solver's hottest). The row's first and last word need
    // neither.
    auto at = [](std::int64_t a, std::int64_t b, const Fraction& x) {
      if (x.is_zero) return a;
      if (x.is_one) return b;
      return a + static_cast<std::int64_t>(static_cast<double>(b - a) * x.value);
    };
    // Output row k from its needed input row (first word a, last b), after
    // the output row before it.
    std::int64_t prev_last = kNever;
    auto emit = [&](std::size_t k, std::int64_t a, std::int64_t b) {
      of[k] = std::max(at(a, b, m.first_at) + first_delay, prev_last + beat_out);
      ol[k] = std::max(at(a, b, m.last_at) + tail, of[k] + row_out - beat_out);
      prev_last = ol[k];
    };
    if (only && only->first.size() >= rows_in && !keep_intake_) {
      // One producer with every row (most modules): its rows taken in and
      // the output rows made in one pass. An output row needs the latest
      // input row taken so far (need is non-decreasing), so only that
      // row's first and last word are kept.
      const std::int64_t off = only->offset;
      std::int64_t taken = -1, in_f = 0, in_l = 0;
      for (int f = 0; f < frames; ++f) {
        for (std::int64_t i = 0; i < Ho; ++i) {
          const std::int64_t row = f * H + m.need[static_cast<std::size_t>(i)];
          while (taken < row) {
            const auto r = static_cast<std::size_t>(++taken);
            in_f = std::max<std::int64_t>(0, only->first[r] + off);
            if (r > 0) in_f = std::max(in_f, in_l + pixel_in);
            in_l = std::max(std::max<std::int64_t>(0, only->last[r] + off), in_f + row_in - pixel_in);
          }
          emit(static_cast<std::size_t>(f * Ho + i), in_f, in_l);
        }
      }
    } else {
      // The input rows as this module takes them: the latest of its
      // inputs' rows (an add waits for both), at no more than its own
      // input rate. (Times are never negative, so the 0 these start from
      // binds only where a producer has fewer rows than this module reads:
      // see whole_rows.)
      std::vector<std::int64_t>& in_first = in_first_;
      std::vector<std::int64_t>& in_last = in_last_;
      in_first.assign(rows_in, 0);
      in_last.assign(rows_in, 0);
      for (int pi : m.producers) {
        const Mod& p = mods_[static_cast<std::size_t>(pi)];
        const std::size_t n = std::min(rows_in, p.first.size());
        for (std::size_t r = 0; r < n; ++r) {
          in_first[r] = std::max(in_first[r], p.first[r] + p.offset);
          in_last[r] = std::max(in_last[r], p.last[r] + p.offset);
        }
      }
      for (std::size_t r = 0; r < rows_in; ++r) {
        if (r > 0) in_first[r] = std::max(in_first[r], in_last[r - 1] + pixel_in);
        in_last[r] = std::max(in_last[r], in_first[r] + row_in - pixel_in);
      }
      for (int f = 0; f < frames; ++f)
        for (std::int64_t i = 0; i < Ho; ++i) {
          const auto row = static_cast<std::size_t>(f * H + m.need[static_cast<std::size_t>(i)]);
          emit(static_cast<std::size_t>(f * Ho + i), in_first[row], in_last[row]);
        }
    }
  }
  // Against the old rows: unchanged, one uniform shift, or moved.
  const std::int64_t shift = of[0] - (m.first[0] + m.offset);
  bool uniform = true;
  for (std::size_t k = 0; k < of.size() && uniform; ++k)
    uniform = of[k] - (m.first[k] + m.offset) == shift && ol[k] - (m.last[k] + m.offset) == shift;
  m.moved = !uniform ? Moved::Yes : shift != 0 ? Moved::Shifted : Moved::No;
  m.shift = shift;
  m.first.swap(of);
  m.last.swap(ol);
  if (keep_intake_ && m.kind != ModuleKind::HostIn) {
    m.in_first = in_first_;
    m.in_last = in_last_;
  }
  if (depth_ > 0 && m.rows_saved != trials_[depth_ - 1].id) {
    // The old rows go to the log as they are (of / ol hold them now); the
    // log's spare vectors become the scratch.
    Saved& e = save(static_cast<int>(&m - mods_.data()), true);
    e.first.swap(of);
    e.last.swap(ol);
    e.computed = old_computed;
    e.ever = old_ever;
  }
  m.offset = 0;
}

// A log entry for module i in the innermost trial, with its offset as it
// is now; a rows entry's rows, `computed` and `ever` are the caller's to
// fill (compute() has replaced them by then).
RowTimelineTracker::Saved& RowTimelineTracker::save(int i, bool rows) {
  Mod& m = mods_[static_cast<std::size_t>(i)];
  const std::uint64_t id = trials_[depth_ - 1].id;
  if (saved_ == log_.size()) log_.emplace_back();
  Saved& e = log_[saved_++];
  e.module = i;
  e.rows = rows;
  e.offset = m.offset;
  if (rows) {
    m.rows_saved = id;
  } else {
    m.offset_saved = id;
  }
  return e;
}

void RowTimelineTracker::begin_trial() {
  require(!keep_intake_, "internal: a row timeline that keeps intake rows has no trials");
  if (depth_ == trials_.size()) trials_.emplace_back();
  Trial& t = trials_[depth_++];
  t.id = next_trial_++;
  t.saved = saved_;
  t.pending = pending_;
  t.latency = latency_;
  t.answered = answered_;
}

void RowTimelineTracker::rollback() {
  require(depth_ > 0, "internal: row timeline rollback without a trial");
  Trial& t = trials_[--depth_];
  for (std::size_t k = saved_; k-- > t.saved;) {
    Saved& e = log_[k];
    Mod& m = mods_[static_cast<std::size_t>(e.module)];
    m.offset = e.offset;
    if (e.rows) {
      m.first.swap(e.first);
      m.last.swap(e.last);
      m.computed = e.computed;
      m.ever = e.ever;
    }
  }
  saved_ = t.saved;
  // What was pending at begin_trial() is pending again, in a new pass (the
  // trial's set_cycles() marked others as queued in this one).
  ++pass_;
  pending_.swap(t.pending);
  for (int i : pending_) mods_[static_cast<std::size_t>(i)].queued_pass = pass_;
  latency_ = t.latency;
  answered_ = t.answered;
}

void RowTimelineTracker::commit() {
  require(depth_ > 0, "internal: row timeline commit without a trial");
  --depth_;
  if (depth_ > 0) return;
  saved_ = 0;
  if (answered_ && !pending_.empty()) recompute();
}

RowTimeline RowTimelineTracker::timeline() {
  if (!pending_.empty()) recompute();
  RowTimeline t;
  t.latency = latency_;
  t.modules.resize(mods_.size());
  const double u = static_cast<double>(kRowTimeUnit);
  auto in_cycles = [u](const std::vector<std::int64_t>& rows, std::int64_t offset, std::vector<double>& out) {
    out.resize(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) out[k] = static_cast<double>(rows[k] + offset) / u;
  };
  for (std::size_t i = 0; i < mods_.size(); ++i) {
    const Mod& m = mods_[i];
    RowTimes& r = t.modules[i];
    in_cycles(m.first, m.offset, r.first);
    in_cycles(m.last, m.offset, r.last);
    in_cycles(m.in_first, m.offset, r.in_first);
    in_cycles(m.in_last, m.offset, r.in_last);
  }
  return t;
}

RowTimeline row_timeline(const Graph& g, int frames, double period, bool with_intake) {
  RowTimelineTracker t(g, frames, period, with_intake);
  t.update([&](int m) -> const Cycles& { return g.modules[static_cast<std::size_t>(m)].cycles; });
  return t.timeline();
}

namespace {

// A cumulative count of pixels as a sum of per-row ramps (W pixels from
// `from` to `to`), with ramps in non-decreasing order of both ends.
struct Ramps {
  std::vector<double> from, to;
  double width = 1;
  // Pixels done by time t; calls must come in non-decreasing t.
  std::size_t done = 0;
  double at(double t) {
    while (done < from.size() && to[done] <= t) ++done;
    double n = static_cast<double>(done) * width;
    for (std::size_t k = done; k < from.size() && from[k] < t; ++k)
      n += width * (to[k] > from[k] ? (t - from[k]) / (to[k] - from[k]) : 1.0);
    return n;
  }
};

// Pixels the consumer's input buffer holds.
double buffer_pixels(const Module& m) {
  const Window w = window_of(m);
  if (w.whole_frame || m.kind == ModuleKind::HostOut) return 1e18;
  if (m.kind == ModuleKind::Stage || m.kind == ModuleKind::MaxPool || m.kind == ModuleKind::AvgPool)
    return static_cast<double>(line_buffer_pixels(w.kh, w.kw, w.sh, w.sw, w.ph, w.pw, m.in_shape.h, m.in_shape.w));
  return 2;
}

}  // namespace

std::vector<std::int64_t> fan_out_fifo_depths(const Graph& g, std::int64_t interval, std::int64_t fifo_depth) {
  std::vector<std::int64_t> depth(g.streams.size(), 0);
  bool any = false;
  for (const Module& m : g.modules) any = any || m.outputs.size() > 1;
  if (!any) return depth;
  constexpr int kFrames = 3;
  const RowTimeline t = row_timeline(g, kFrames, static_cast<double>(interval), true);
  // One output of a fan-out: what its consumer has room for over time.
  struct Branch {
    int stream = -1;
    double cap = 0;  // pixels its line buffer holds (1e18: takes all)
    Ramps released;  // pixels it has freed
    Ramps intake;    // pixels it has taken in, at its own rate
  };
  for (const Module& p : g.modules) {
    if (p.outputs.size() < 2) continue;
    const RowTimes& pt = t.modules[static_cast<std::size_t>(&p - g.modules.data())];
    std::vector<Branch> branches;
    std::int64_t H = 0, W = 0;
    for (int si : p.outputs) {
      const Stream& st = g.streams[static_cast<std::size_t>(si)];
      const Module& c = g.modules[static_cast<std::size_t>(st.to)];
      H = std::max<std::int64_t>(1, c.in_shape.h);
      W = std::max<std::int64_t>(1, c.in_shape.w);
      const std::int64_t Ho = std::max<std::int64_t>(1, c.out_shape.h);
      if (pt.first.size() != static_cast<std::size_t>(kFrames * H)) break;
      const RowTimes& ct = t.modules[static_cast<std::size_t>(st.to)];
      const Window w = window_of(c);
      Branch b;
      b.stream = si;
      b.cap = buffer_pixels(c);
      b.released.width = static_cast<double>(W);
      b.released.from.resize(pt.first.size());
      b.released.to.resize(pt.first.size());
      // The rows as the consumer takes them (the timeline's intake): when
      // every producer has them, at no more than its own input rate — a
      // row no window reads is dropped as it is taken, not as it arrives
      // (a 1×1 stride-2 downsample at p_in = 2 reads every pixel at 16
      // cycles). And what it has taken in bounds its room: a buffer with
      // room does not absorb a burst faster than the consumer's own rate
      // (a 1×1 stride-2 downsample at two cycles a beat behind a producer
      // at one: docs/simulation.md, agreement case #116). Both ends are
      // non-decreasing (the intake chain), as Ramps needs.
      const std::vector<double>& taken_first = ct.in_first;
      const std::vector<double>& taken_last = ct.in_last;
      if (taken_first.size() != pt.first.size()) break;
      b.intake.width = static_cast<double>(W);
      b.intake.from = taken_first;
      b.intake.to = taken_last;
      for (std::size_t r = 0; r < pt.first.size(); ++r) {
        const auto f = static_cast<std::int64_t>(r) / H, q = static_cast<std::int64_t>(r) % H;
        // The last output row whose window reads input row q (none: it is
        // dropped as it arrives).
        const std::int64_t last = std::min(Ho - 1, (q + w.ph) / w.sh);
        const bool read = last * w.sh - w.ph + w.kh - 1 >= q;
        double x = std::max(pt.first[r], taken_first[r]), y = std::max(pt.last[r], taken_last[r]);
        if (read) {
          const auto k = static_cast<std::size_t>(f * Ho + last);
          x = std::max(x, ct.first[k]);
          y = std::max({y, ct.last[k], x});
        }
        // Ramps must stay ordered: a row is not freed before the one before it.
        if (r > 0) {
          x = std::max(x, b.released.from[r - 1]);
          y = std::max(y, b.released.to[r - 1]);
        }
        b.released.from[r] = x;
        b.released.to[r] = y;
      }
      branches.push_back(std::move(b));
    }
    if (branches.size() != p.outputs.size()) continue;
    // Every breakpoint, in order: the runs are each sorted already (rows
    // follow one another; the released ramps are kept ordered), so merging
    // them gives what sorting the lot would, at a fraction of the time.
    std::vector<double> times;
    times.reserve(pt.first.size() * (2 + 4 * branches.size()));
    times.assign(pt.first.begin(), pt.first.end());
    auto add_run = [&](const std::vector<double>& run) {
      const auto middle = static_cast<std::ptrdiff_t>(times.size());
      times.insert(times.end(), run.begin(), run.end());
      if (std::is_sorted(run.begin(), run.end()))
        std::inplace_merge(times.begin(), times.begin() + middle, times.end());
      else
        std::sort(times.begin(), times.end());
    };
    if (!std::is_sorted(times.begin(), times.end())) std::sort(times.begin(), times.end());
    add_run(pt.last);
    for (const Branch& b : branches) {
      add_run(b.released.from);
      add_run(b.released.to);
      add_run(b.intake.from);  // room is the lesser of two ramps: both bend
      add_run(b.intake.to);
    }
    // The same time twice gives the same counts (Ramps::at is a function
    // of t): once is enough.
    times.erase(std::unique(times.begin(), times.end()), times.end());
    // A branch holds the producer back when the producer has emitted more
    // than its consumer has room for (cap + freed, but no more than it has
    // taken in at its own rate) — and that costs time
    // only if another consumer would have taken those words by then itself
    // (at its own block: its FIFO is no demand). A fast producer held back
    // by its slowest consumer alone loses nothing.
    Ramps produced;
    produced.width = static_cast<double>(W);
    produced.from = pt.first;
    produced.to = pt.last;
    std::vector<double> worst(branches.size(), 0), room(branches.size());
    for (double x : times) {
      const double made = produced.at(x);
      for (std::size_t k = 0; k < branches.size(); ++k)
        room[k] = std::min(branches[k].cap + branches[k].released.at(x), branches[k].intake.at(x));
      for (std::size_t k = 0; k < branches.size(); ++k) {
        double taken = 0;  // the most another consumer takes by x
        for (std::size_t j = 0; j < branches.size(); ++j)
          if (j != k) taken = std::max(taken, std::min(made, room[j]));
        worst[k] = std::max(worst[k], taken - room[k]);
      }
    }
    for (std::size_t k = 0; k < branches.size(); ++k) {
      const Stream& st = g.streams[static_cast<std::size_t>(branches[k].stream)];
      if (st.skip || branches[k].cap >= 1e17 || worst[k] <= 0) continue;
      const double words_per_pixel = static_cast<double>(st.words) / static_cast<double>(H * W);
      depth[static_cast<std::size_t>(branches[k].stream)] =
          static_cast<std::int64_t>(std::ceil(worst[k] * words_per_pixel / static_cast<double>(st.width))) + fifo_depth;
    }
  }
  return depth;
}

}  // namespace mixtd::arch
