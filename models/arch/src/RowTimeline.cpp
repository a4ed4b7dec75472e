#include "mixtd/arch/RowTimeline.h"

#include <algorithm>
#include <cmath>

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

RowTimeline row_timeline(const Graph& g, int frames, double period) {
  RowTimeline t;
  t.modules.resize(g.modules.size());
  frames = std::max(frames, 1);
  for (std::size_t mi = 0; mi < g.modules.size(); ++mi) {
    const Module& m = g.modules[mi];
    const Cycles& c = m.cycles;
    const std::int64_t H = std::max<std::int64_t>(1, m.in_shape.h), W = std::max<std::int64_t>(1, m.in_shape.w);
    const std::int64_t Ho = std::max<std::int64_t>(1, m.out_shape.h), Wo = std::max<std::int64_t>(1, m.out_shape.w);
    const double row_in = static_cast<double>(c.in) / static_cast<double>(H);
    const double row_out = static_cast<double>(std::max(c.compute, c.out)) / static_cast<double>(Ho);
    const double pixel_out = row_out / static_cast<double>(Wo);
    RowTimes& o = t.modules[mi];
    o.first.assign(static_cast<std::size_t>(frames * Ho), 0);
    o.last.assign(o.first.size(), 0);

    if (m.kind == ModuleKind::HostIn) {
      for (int f = 0; f < frames; ++f) {
        const double start = std::max(f * period, f > 0 ? o.last[static_cast<std::size_t>(f * Ho - 1)] : 0.0);
        for (std::int64_t r = 0; r < Ho; ++r) {
          const auto i = static_cast<std::size_t>(f * Ho + r);
          o.first[i] = start + static_cast<double>(r) * row_out;
          o.last[i] = o.first[i] + row_out - 1;
        }
      }
      continue;
    }

    // The input rows as this module takes them: the latest of its inputs'
    // rows (an add waits for both), at no more than its own input rate.
    std::vector<double> in_first(static_cast<std::size_t>(frames * H), 0), in_last(in_first.size(), 0);
    for (int s : m.inputs) {
      const Stream& st = g.streams[static_cast<std::size_t>(s)];
      const RowTimes& p = t.modules[static_cast<std::size_t>(st.from)];
      const std::size_t n = std::min(in_first.size(), p.first.size());
      for (std::size_t r = 0; r < n; ++r) {
        in_first[r] = std::max(in_first[r], p.first[r]);
        in_last[r] = std::max(in_last[r], p.last[r]);
      }
    }
    const double pixel_in = row_in / static_cast<double>(W);
    for (std::size_t r = 0; r < in_first.size(); ++r) {
      if (r > 0) in_first[r] = std::max(in_first[r], in_last[r - 1] + pixel_in);
      in_last[r] = std::max(in_last[r], in_first[r] + row_in - pixel_in);
    }
    auto at = [&](std::int64_t row, double fraction) {
      const auto r = static_cast<std::size_t>(row);
      return in_first[r] + fraction * (in_last[r] - in_first[r]);
    };

    const Window w = window_of(m);
    const bool streaming = m.kind != ModuleKind::Stage && m.kind != ModuleKind::MaxPool &&
                           m.kind != ModuleKind::AvgPool && m.kind != ModuleKind::GlobalAvgPool;
    const double first_delay = static_cast<double>(c.fill - c.window);
    const double tail = static_cast<double>(c.tail);
    // Of the last needed input row: the columns the first and the last
    // window of an output row reach.
    const double first_cols = static_cast<double>(std::clamp<std::int64_t>(w.kw - w.pw, 1, W)) / static_cast<double>(W);
    const double last_cols =
        static_cast<double>(std::clamp<std::int64_t>((Wo - 1) * w.sw - w.pw + w.kw, 1, W)) / static_cast<double>(W);
    double prev_last = -1e300;
    for (int f = 0; f < frames; ++f) {
      for (std::int64_t i = 0; i < Ho; ++i) {
        const std::int64_t need =
            w.whole_frame ? H - 1 : std::clamp<std::int64_t>(i * w.sh - w.ph + w.kh - 1, 0, H - 1);
        const std::int64_t row = f * H + need;
        const auto k = static_cast<std::size_t>(f * Ho + i);
        // A streaming block forwards beat by beat: its first output follows
        // its first input beat, not a whole pixel.
        const double fc = w.whole_frame ? 1.0 : streaming ? 0.0 : first_cols;
        o.first[k] = std::max(at(row, fc) + first_delay, prev_last + pixel_out);
        o.last[k] = std::max(at(row, w.whole_frame ? 1.0 : last_cols) + tail, o.first[k] + row_out - pixel_out);
        prev_last = o.last[k];
      }
    }
  }
  const int in = g.find("host_in"), out = g.find("host_out");
  if (in >= 0 && out >= 0) {
    const RowTimes& a = t.modules[static_cast<std::size_t>(in)];
    const RowTimes& b = t.modules[static_cast<std::size_t>(out)];
    const std::int64_t rows = std::max<std::int64_t>(1, g.modules[static_cast<std::size_t>(out)].out_shape.h);
    t.latency = static_cast<std::int64_t>(std::ceil(b.last[static_cast<std::size_t>(rows - 1)] - a.first[0]));
  }
  return t;
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
  const RowTimeline t = row_timeline(g, kFrames, static_cast<double>(interval));
  // One output of a fan-out: what its consumer has room for over time.
  struct Branch {
    int stream = -1;
    double cap = 0;  // pixels its line buffer holds (1e18: takes all)
    Ramps released;  // pixels it has freed
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
      for (std::size_t r = 0; r < pt.first.size(); ++r) {
        const auto f = static_cast<std::int64_t>(r) / H, q = static_cast<std::int64_t>(r) % H;
        // The last output row whose window reads input row q (none: it is
        // dropped as it arrives).
        const std::int64_t last = std::min(Ho - 1, (q + w.ph) / w.sh);
        const bool read = last * w.sh - w.ph + w.kh - 1 >= q;
        double x = pt.first[r], y = pt.last[r];
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
    std::vector<double> times(pt.first.begin(), pt.first.end());
    times.insert(times.end(), pt.last.begin(), pt.last.end());
    for (const Branch& b : branches) {
      times.insert(times.end(), b.released.from.begin(), b.released.from.end());
      times.insert(times.end(), b.released.to.begin(), b.released.to.end());
    }
    std::sort(times.begin(), times.end());
    // A branch holds the producer back when the producer has emitted more
    // than its consumer has room for (cap + freed) — and that costs time
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
      for (std::size_t k = 0; k < branches.size(); ++k) room[k] = branches[k].cap + branches[k].released.at(x);
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
