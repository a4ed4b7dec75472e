// The legal unrollings of every stage of a design (private to
// mixtd::search): each with its own cycles, output width and resources, the
// lists the default solver's scans run over (Balancer.h; docs/solver.md
// "solve()").
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "Evaluator.h"

namespace mixtd::search::detail {

// One legal unrolling of a stage and what it gives on its own: cycles,
// output width, resources of all its instances and of its output FIFOs.
// Where the weight memory is a choice (block RAM on a device with URAM) the
// option has two placements, weights in BRAM18 (`res`) or in URAM
// (`in_uram()`), and the prices decide between them at every scan, as
// between unrollings. (One option with two placements rather than two
// options: the scans, the solver's main cost, stay half as long.)
// (What every scan reads comes first, in one cache line.)
struct alignas(64) Option {
  std::int64_t interval = 0, fill = 0, width = 0;
  arch::Resources res;
  bool memory_choice = false;
  double weight_bram18 = 0;  // of res, the weights' (all instances)
  double weight_uram = 0;    // the same weights in URAM
  arch::Psi psi;             // weight_memory: Bram where it is a choice, else Auto
  arch::Resources in_uram() const {
    arch::Resources r = res;
    r.bram18 -= weight_bram18;
    r.uram += weight_uram;
    return r;
  }
};

// An option of a stage with its placement: the unit every scan picks.
struct Pick {
  int option = -1;  // -1: none
  bool uram = false;
  bool operator==(const Pick&) const = default;
  bool none() const { return option < 0; }
};

// A stage's options with, per option i, a lower bound on what any option
// from i on takes of each resource (in either placement) and the shortest
// fill from i on: the scans stop early where nothing further can win.
struct Bound {
  arch::Resources least;
  std::int64_t fill = 0;
};
struct Table {
  std::vector<Option> opts;
  std::vector<Bound> from;  // from[i]: over opts[i..]
};

class StageOptions {
 public:
  explicit StageOptions(const Evaluator& ev) : ev_(ev), tables_of_(static_cast<std::size_t>(ev.stage_count())) {}

  // Every legal ψ of stage s with its cycles and resources, enumerated the
  // first time the stage is looked at.
  const std::vector<Option>& options(int s) { return table(s).opts; }
  const Table& table(int s) {
    const Table* t = tables_of_[static_cast<std::size_t>(s)];
    return t ? *t : enumerate(s);
  }
  const Option& option(int s, int i) { return options(s)[static_cast<std::size_t>(i)]; }

  // The ψ and resources of a pick.
  arch::Psi psi_of(int s, Pick k) {
    arch::Psi p = option(s, k.option).psi;
    if (k.uram) p.weight_memory = arch::WeightMemory::Uram;
    return p;
  }
  arch::Resources res_of(int s, Pick k) {
    const Option& o = option(s, k.option);
    return k.uram ? o.in_uram() : o.res;
  }

  // The first option of stage s faster than `interval` (options are
  // sorted slowest first, so every later one is too).
  std::size_t first_faster(int s, std::int64_t interval) {
    const auto& opts = options(s);
    return static_cast<std::size_t>(
        std::partition_point(opts.begin(), opts.end(), [&](const Option& o) { return o.interval >= interval; }) -
        opts.begin());
  }

 private:
  // What a stage's options are a function of: its shape, its instances, the
  // FIFOs after it (instances and depths, as they are now), the number
  // formats and whether the device has URAM. Stages alike in all of it (the
  // repeated blocks of a network) share one table, and so do solves: see
  // TableCache.
  struct TableKey {
    td::StageShape shape;  // all but the role
    std::int64_t count = 0;
    std::vector<std::pair<std::int64_t, std::int64_t>> fifos;  // per output stream: instances, depth
    net::Bits bits;
    bool uram = false;
    bool operator==(const TableKey& o) const {
      const td::StageShape &a = shape, &b = o.shape;
      return a.in_ch == b.in_ch && a.out_ch == b.out_ch && a.kh == b.kh && a.kw == b.kw && a.sh == b.sh &&
             a.sw == b.sw && a.ph == b.ph && a.pw == b.pw && a.depthwise == b.depthwise && a.groups == b.groups &&
             a.in == b.in && a.out == b.out && count == o.count && fifos == o.fifos && bits.weight == o.bits.weight &&
             bits.activation == o.bits.activation && uram == o.uram;
    }
  };
  struct TableKeyHash {
    std::size_t operator()(const TableKey& k) const {
      std::uint64_t h = 0x9e3779b97f4a7c15ULL;
      auto mix = [&](std::int64_t v) { h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL; };
      const td::StageShape& a = k.shape;
      for (std::int64_t v : {a.in_ch, a.out_ch, a.kh, a.kw, a.sh, a.sw, a.ph, a.pw, a.groups, a.in.c, a.in.h, a.in.w,
                             a.out.c, a.out.h, a.out.w, k.count})
        mix(v);
      mix(a.depthwise);
      for (const auto& [n, d] : k.fifos) {
        mix(n);
        mix(d);
      }
      mix(k.bits.weight);
      mix(k.bits.activation);
      mix(k.uram);
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };

  // Option tables outlive a solve: a search solves design after design
  // that share most layers (and solve() re-solves with the FIFO depths it
  // sized). Per thread, emptied when it holds more than kCachedOptions.
  struct TableCache {
    std::unordered_map<TableKey, std::shared_ptr<const Table>, TableKeyHash> tables;
    std::size_t options = 0;
  };
  static constexpr std::size_t kCachedOptions = std::size_t{1} << 16;
  static TableCache& table_cache();

  const Table& enumerate(int s);
  void build_table(int s, Table& table);
  // The FIFOs after module m at output width w (at today's depths), looked
  // up in `cache` first: many options share a width.
  arch::Resources output_fifos(int m, std::int64_t w,
                               std::vector<std::pair<std::int64_t, arch::Resources>>& cache) const;

  const Evaluator& ev_;
  std::vector<const Table*> tables_of_;               // per stage, into tables_ (null until enumerated)
  std::vector<std::shared_ptr<const Table>> tables_;  // those this solve uses (the cache may drop them)
};

}  // namespace mixtd::search::detail
