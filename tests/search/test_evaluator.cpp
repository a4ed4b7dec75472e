// The solver's incremental evaluator agrees exactly with arch::analyse() on
// interval, batch-1 latency (the row timeline), bottleneck and total
// resources, and its fill estimate (the
// arrival curves' fill sum; analyse() reports the row timeline's) equals a
// fresh arch::arrivals() — after a full reset and
// after every single-stage change — on random ψ (weight memory kinds
// included) over several networks and τ.
#include <gtest/gtest.h>

#include "Evaluator.h"
#include "SearchTestUtil.h"
#include "mixtd/arch/Analytical.h"

namespace {

using namespace mixtd;
using namespace mixtd::search::testing;
using search::detail::Evaluator;

void expect_same(const Evaluator& ev, const arch::Design& d, const std::string& where) {
  const arch::Report r = arch::analyse(d);
  EXPECT_EQ(ev.interval(), r.interval) << where;
  const auto arr = arch::arrivals(r.graph);
  EXPECT_EQ(ev.fill(), arr.back().fill) << where;
  // The solver's objective is the report's latency, not an estimate.
  EXPECT_EQ(ev.latency_cycles(), r.latency_cycles(1)) << where;
  EXPECT_EQ(ev.bottleneck(), r.bottleneck) << where;
  EXPECT_EQ(ev.total().dsp, r.total.dsp) << where;
  EXPECT_EQ(ev.total().bram18, r.total.bram18) << where;
  EXPECT_EQ(ev.total().uram, r.total.uram) << where;
  EXPECT_EQ(ev.total().lut, r.total.lut) << where;
  EXPECT_EQ(ev.total().ff, r.total.ff) << where;
  EXPECT_EQ(ev.fits(), r.fits()) << where;
}

// Random ψ, applied both as a whole (set_all) and stage by stage (set_psi),
// each checked against a fresh analyse().
void check_design(arch::Design d, std::uint64_t seed, int rounds, int singles) {
  Rng rng(seed);
  Evaluator ev(d);
  expect_same(ev, d, d.name + " initial");
  for (int round = 0; round < rounds; ++round) {
    random_psi(d, rng);
    Evaluator fresh(d);
    std::vector<arch::Psi> psis;
    for (int s = 0; s < fresh.stage_count(); ++s) psis.push_back(fresh.psi(s));
    ev.set_all(psis);
    expect_same(ev, d, d.name + " set_all round " + std::to_string(round));
    for (int k = 0; k < singles; ++k) {
      const int s = static_cast<int>(rng.below(static_cast<std::uint64_t>(ev.stage_count())));
      const auto& slot = ev.slot(s);
      arch::Psi p = ev.psi(s);
      switch (rng.below(4)) {
        case 0:
          p.p_in = pick(slot.p_in, rng);
          break;
        case 1:
          if (!slot.depthwise()) p.p_out = pick(slot.p_out, rng);
          break;
        case 2:
          p.fine = pick(slot.fine, rng);
          break;
        default:
          p.weight_memory = random_weight_memory(d, rng);
          break;
      }
      if (slot.depthwise()) p.p_out = p.p_in;
      ev.set_psi(s, p);
      ev.apply(d);
      expect_same(ev, d,
                  d.name + " round " + std::to_string(round) + " change " + std::to_string(k) + " (" + slot.layer +
                      " stage " + std::to_string(slot.index) + ")");
      if (::testing::Test::HasFailure()) return;
    }
    // Several stages at once (one of them twice: the last ψ wins), in one
    // propagation.
    std::vector<std::pair<int, arch::Psi>> batch;
    for (int k = 0; k < 4; ++k) {
      const int s = static_cast<int>(rng.below(static_cast<std::uint64_t>(ev.stage_count())));
      const auto& slot = ev.slot(s);
      arch::Psi p{pick(slot.p_in, rng), 1, pick(slot.fine, rng)};
      p.p_out = slot.depthwise() ? p.p_in : pick(slot.p_out, rng);
      p.weight_memory = random_weight_memory(d, rng);
      batch.emplace_back(s, p);
      if (k == 1) {
        p.fine = pick(slot.fine, rng);
        batch.emplace_back(s, p);
      }
    }
    ev.set_psis(batch);
    ev.apply(d);
    expect_same(ev, d, d.name + " round " + std::to_string(round) + " batch");
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(Evaluator, MatchesAnalyseResnet18Undecomposed) { check_design(zoo_design("resnet18", "u250"), 1, 4, 30); }

TEST(Evaluator, MatchesAnalyseResnet18SvdFilter) {
  check_design(uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter), 2, 3, 30);
}

TEST(Evaluator, MatchesAnalyseResnet18GroupedSvd) {
  check_design(uniform_tau(zoo_design("resnet18", "u250"), td::TdType::SvdFilter, 1, 4), 3, 3, 30);
}

TEST(Evaluator, MatchesAnalyseResnet18Cpd) {
  check_design(uniform_tau(zoo_design("resnet18", "zc706"), td::TdType::Cpd), 4, 3, 30);
}

TEST(Evaluator, MatchesAnalyseResnet18RandomTau) {
  for (std::uint64_t seed = 10; seed < 13; ++seed)
    check_design(random_tau(zoo_design("resnet18", "u250"), seed), seed, 2, 20);
}

TEST(Evaluator, MatchesAnalyseRepvgg) { check_design(zoo_design("repvgg-a0", "u250"), 5, 3, 30); }

TEST(Evaluator, MatchesAnalyseSmallNets) {
  check_design(zoo_design("tiny", "zcu102"), 6, 4, 40);
  check_design(zoo_design("tiny-dw", "zcu102"), 7, 4, 40);
  check_design(random_tau(zoo_design("tiny:width=2", "zc706"), 8), 8, 4, 40);
  check_design(zoo_design("resnet18-fmnist", "zc706"), 9, 3, 30);
  check_design(random_tau(zoo_design("resnet18-fmnist", "zcu102"), 9), 9, 3, 30);
}

// Every stage's weight memory through bram, uram and auto, one at a time,
// at ψ where most of them are block RAM: each change equals analyse(), and
// the changes do move BRAM18 and URAM.
TEST(Evaluator, MatchesAnalyseWhenTheWeightMemoryMoves) {
  for (const auto& [name, design] :
       {std::pair{std::string("resnet18"), zoo_design("resnet18", "u250")},
        std::pair{std::string("resnet18 cpd"), uniform_tau(zoo_design("resnet18", "u250"), td::TdType::Cpd)}}) {
    arch::Design d = design;
    Rng rng(31);
    random_psi(d, rng);
    Evaluator ev(d);
    int moved_uram = 0;
    for (int s = 0; s < ev.stage_count(); ++s) {
      for (arch::WeightMemory m : {arch::WeightMemory::Bram, arch::WeightMemory::Uram, arch::WeightMemory::Auto}) {
        arch::Psi p = ev.psi(s);
        p.weight_memory = m;
        const double uram_before = ev.total().uram;
        ev.set_psi(s, p);
        moved_uram += ev.total().uram != uram_before;
        ev.apply(d);
        expect_same(ev, d,
                    name + " " + ev.slot(s).layer + " stage " + std::to_string(ev.slot(s).index) + " to " +
                        std::string(arch::to_string(m)));
        if (::testing::Test::HasFailure()) return;
      }
    }
    EXPECT_GT(moved_uram, ev.stage_count() / 2) << name;
  }
}

// A design's own FIFO depth overrides win over the skip sizing.
TEST(Evaluator, MatchesAnalyseWithFifoOverrides) {
  arch::Design d = zoo_design("tiny", "zcu102");
  const arch::Report r = arch::analyse(d);
  int overridden = 0;
  for (const auto& s : r.graph.streams) {
    if (s.skip || overridden == 0) {
      d.fifo_depths[s.name] = 37 + overridden;
      ++overridden;
    }
  }
  ASSERT_GE(overridden, 2);
  d.fifo_depth = 3;
  check_design(d, 11, 3, 40);
}

}  // namespace

namespace {

// A rolled-back trial leaves the design exactly as before it (nested trials
// too); a committed one is the design with the changes.
TEST(Evaluator, TrialsRollBackAndCommit) {
  for (const std::string spec : {"resnet18", "tiny-dw"}) {
    arch::Design d = random_tau(zoo_design(spec, "u250"), 21);
    Rng rng(22);
    random_psi(d, rng);
    Evaluator ev(d);
    auto change = [&](int n) {
      for (int k = 0; k < n; ++k) {
        const int s = static_cast<int>(rng.below(static_cast<std::uint64_t>(ev.stage_count())));
        const auto& slot = ev.slot(s);
        arch::Psi p{pick(slot.p_in, rng), 1, pick(slot.fine, rng)};
        p.p_out = slot.depthwise() ? p.p_in : pick(slot.p_out, rng);
        p.weight_memory = random_weight_memory(d, rng);
        ev.set_psi(s, p);
        // The row timeline keeps trials of its own: bring it up to date at
        // random points, so that rollbacks undo computed rows, shifted rows
        // and changes still pending, at every nesting.
        if (rng.below(2) == 0) ev.latency_cycles();
      }
    };
    for (int round = 0; round < 20; ++round) {
      const arch::Design before = d;
      ev.begin_trial();
      change(3);
      ev.begin_trial();
      change(2);
      if (round % 2)
        ev.commit();
      else
        ev.rollback();
      change(1);
      ev.rollback();
      expect_same(ev, before, spec + " rollback round " + std::to_string(round));
      ev.begin_trial();
      change(2);
      ev.begin_trial();
      change(2);
      ev.commit();
      ev.commit();
      ev.apply(d);
      expect_same(ev, d, spec + " commit round " + std::to_string(round));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
