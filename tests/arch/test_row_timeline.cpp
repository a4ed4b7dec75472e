// RowTimelineTracker: incremental updates, nested trials and the latency
// memo give, in every state, the latency and rows a fresh row_timeline()
// of the same Cycles gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/RowTimeline.h"
#include "mixtd/net/Zoo.h"

using namespace mixtd::arch;

namespace {

Graph graph_of(const std::string& spec) {
  return build_graph(make_design(mixtd::net::build_zoo(spec), spec, load_device("zcu102"), "zcu102"));
}

// Module Cycles variant v of c (0: c itself): slower or faster, with other
// fills and tails, as a ψ change gives.
Cycles variant(const Cycles& c, int v) {
  if (v == 0) return c;
  Cycles x = c;
  x.in = c.in * (v + 1) / 2 + v;
  x.compute = c.compute * (v + 2) / 3 + v;
  x.out = c.out * (v + 1) / 2;
  x.fill = c.fill + 7 * v;
  x.window = std::min(c.window + v, x.fill);
  x.tail = c.tail + 3 * v;
  return x;
}

// A fresh timeline of g with module m at variant vs[m].
RowTimeline fresh(Graph g, const std::vector<int>& vs) {
  for (std::size_t m = 0; m < g.modules.size(); ++m) g.modules[m].cycles = variant(g.modules[m].cycles, vs[m]);
  return row_timeline(g);
}

void expect_rows_equal(const RowTimeline& a, const RowTimeline& b, const std::string& what) {
  ASSERT_EQ(a.modules.size(), b.modules.size());
  EXPECT_EQ(a.latency, b.latency) << what;
  for (std::size_t m = 0; m < a.modules.size(); ++m) {
    EXPECT_EQ(a.modules[m].first, b.modules[m].first) << what << " module " << m;
    EXPECT_EQ(a.modules[m].last, b.modules[m].last) << what << " module " << m;
  }
}

TEST(RowTimelineTracker, RandomChangesInNestedTrialsMatchAFreshTimeline) {
  for (const std::string spec : {"resnet18-fmnist:width=0.25", "tiny-dw"}) {
    const Graph g = graph_of(spec);
    const int n = static_cast<int>(g.modules.size());
    RowTimelineTracker t(g);
    std::vector<int> vs(static_cast<std::size_t>(n), 0);
    std::vector<std::vector<int>> saved;  // vs at each open trial
    std::mt19937_64 rng(31);
    auto below = [&](int k) { return static_cast<int>(rng() % static_cast<std::uint64_t>(k)); };
    int checked = 0;
    for (int step = 0; step < 400; ++step) {
      const int op = below(10);
      if (op < 4) {
        // Five modules, three variants each: states repeat (memo hits).
        const int m = (below(5) + 1) * n / 6, v = below(3);
        vs[static_cast<std::size_t>(m)] = v;
        t.set_cycles(m, variant(g.modules[static_cast<std::size_t>(m)].cycles, v));
      } else if (op < 6 && saved.size() < 3) {
        t.begin_trial();
        saved.push_back(vs);
      } else if (op < 8 && !saved.empty()) {
        // The caller puts its Cycles back, then rolls back.
        vs = saved.back();
        saved.pop_back();
        for (int m = 0; m < n; ++m)
          t.set_cycles(m, variant(g.modules[static_cast<std::size_t>(m)].cycles, vs[static_cast<std::size_t>(m)]));
        t.rollback();
      } else if (op < 9 && !saved.empty()) {
        saved.pop_back();
        t.commit();
      } else {
        ASSERT_EQ(t.latency(), fresh(g, vs).latency) << spec << " step " << step;
        ++checked;
      }
    }
    EXPECT_GT(checked, 20);
    expect_rows_equal(t.timeline(), fresh(g, vs), spec + " at the end");
  }
}

TEST(RowTimelineTracker, AStateSeenBeforeCostsNothingInATrialAndIsComputedWhenKept) {
  const Graph g = graph_of("resnet18-fmnist:width=0.25");
  const int n = static_cast<int>(g.modules.size());
  RowTimelineTracker t(g);
  std::vector<int> vs(static_cast<std::size_t>(n), 0);
  const std::int64_t base = t.latency();
  // The slowest module: slower still, it moves the latency.
  int m = 0;
  for (int k = 0; k < n; ++k)
    if (g.modules[static_cast<std::size_t>(k)].cycles.interval() >
        g.modules[static_cast<std::size_t>(m)].cycles.interval())
      m = k;
  const Cycles slow = variant(g.modules[static_cast<std::size_t>(m)].cycles, 2);
  vs[static_cast<std::size_t>(m)] = 2;
  const std::int64_t moved = fresh(g, vs).latency;
  ASSERT_NE(moved, base);

  t.begin_trial();
  t.set_cycles(m, slow);
  EXPECT_EQ(t.latency(), moved);
  t.set_cycles(m, g.modules[static_cast<std::size_t>(m)].cycles);
  t.rollback();
  EXPECT_EQ(t.latency(), base);

  // The same move again: answered from the memo, no row computed.
  const std::int64_t before = t.module_updates();
  t.begin_trial();
  t.set_cycles(m, slow);
  EXPECT_EQ(t.latency(), moved);
  EXPECT_EQ(t.module_updates(), before);
  // Kept: the rows are brought up to date at once.
  t.commit();
  EXPECT_GT(t.module_updates(), before);
  expect_rows_equal(t.timeline(), fresh(g, vs), "after the commit");
}

// A module with one producer takes its rows in one pass with its output
// rows; keeping the intake rows (for FIFO sizing) takes them into arrays
// first: both give the same rows, over several frames.
TEST(RowTimelineTracker, KeepingTheIntakeRowsChangesNoRow) {
  for (const std::string spec : {"resnet18-fmnist:width=0.25", "tiny-dw"}) {
    const Graph g = graph_of(spec);
    const RowTimeline plain = row_timeline(g, 3, 5000);
    const RowTimeline kept = row_timeline(g, 3, 5000, true);
    expect_rows_equal(plain, kept, spec);
    std::size_t with_intake = 0;
    for (const RowTimes& m : kept.modules) with_intake += !m.in_first.empty();
    EXPECT_GT(with_intake, g.modules.size() / 2) << spec;
  }
}

}  // namespace
