#include "mixtd/rtl/ResourceSweep.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "mixtd/arch/Graph.h"
#include "mixtd/arch/Timing.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::rtl {

namespace {

using arch::LogicBlock;
constexpr net::Bits kBits{8, 8};

std::int64_t pick(Rng& rng, const std::vector<std::int64_t>& v) { return v[rng.below(v.size())]; }

std::vector<std::int64_t> divisors_up_to(std::int64_t x, std::int64_t most) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i <= std::min(x, most); ++i)
    if (x % i == 0) d.push_back(i);
  return d;
}

// Whether the grid has a point of this module with these parameters already
// (the second batch skips repeats: a repeated row adds no information).
bool repeats(const std::vector<SweepPoint>& grid, const SweepPoint& p) {
  for (const auto& q : grid)
    if (q.module == p.module && q.params == p.params) return true;
  return false;
}

std::string numbered(const std::string& stem, std::size_t i) {
  return stem + "_" + (i < 10 ? "0" : "") + std::to_string(i);
}

// Dense and depthwise conv stages of the sizes ResNet-18 and its
// decompositions have (C, N ≤ 256, 7–56 pixels square, 1×1, 3×3, 1×3, 3×1),
// unrolled up to 64 multipliers; repeats of a point already in the grid are
// skipped. `wide_in`: only dense stages of many multipliers per output lane
// (p_in·fine ≥ 8, p_out ≤ 2), so that the fit can tell the multipliers from
// the output lanes (the requantisers), which the first batch moves together.
void add_stages(std::vector<SweepPoint>& grid, bool depthwise, int count, Rng& rng, bool wide_in = false) {
  int made = 0;
  while (made < count) {
    const std::int64_t c = pick(rng, {16, 32, 64, 128, 256});
    const std::int64_t n = depthwise ? c : pick(rng, {16, 32, 64, 128, 256});
    const std::int64_t hw = pick(rng, {7, 14, 28, 56});
    std::int64_t kh = 3, kw = 3;
    if (!depthwise) {
      const auto k = rng.below(4);
      kh = k == 0 ? 1 : k == 2 ? 1 : 3;
      kw = k == 0 ? 1 : k == 3 ? 1 : 3;
    }
    const std::int64_t s = rng.below(4) == 0 ? 2 : 1;
    const std::int64_t ph = kh / 2, pw = kw / 2;
    const std::int64_t p_in = pick(rng, divisors_up_to(c, 16));
    const std::int64_t p_out = depthwise ? 1 : pick(rng, divisors_up_to(n, 16));
    const std::int64_t fine = pick(rng, divisors_up_to(kh * kw, 9));
    const std::int64_t mults = p_in * fine * (depthwise ? 1 : p_out);
    const std::int64_t weights = n * (depthwise ? 1 : c) * kh * kw;
    if (mults > 64 || weights > 128 * 1024) continue;  // keeps one synthesis under a few minutes
    if (wide_in && (p_out > 2 || p_in * fine < 8)) continue;
    const std::int64_t cap = arch::line_buffer_capacity(kh, kw, s, s, ph, pw, hw, hw);
    SweepPoint p;
    p.name = numbered(depthwise ? "dwstage" : "stage", grid.size());
    p.module = "mixtd_conv_stage";
    p.params = {{"C", c},       {"H", hw},
                {"W", hw},      {"N", n},
                {"KH", kh},     {"KW", kw},
                {"SH", s},      {"SW", s},
                {"PH", ph},     {"PW", pw},
                {"P_IN", p_in}, {"P_OUT", p_out},
                {"FINE", fine}, {"DEPTHWISE", depthwise ? 1 : 0},
                {"CAP", cap}};
    const std::int64_t kch = kh * kw / fine, blocks = depthwise ? c / p_in : n / p_out;
    const std::int64_t lanes = depthwise ? p_in * fine : p_out * p_in * fine;
    const std::int64_t words = depthwise ? blocks * kch : blocks * (c / p_in) * kch;
    const std::int64_t out_p = depthwise ? p_in : p_out;
    p.images = {{"WEIGHT_FILE", words, lanes * 8}, {"REQUANT_FILE", blocks, out_p * 40}};
    if (repeats(grid, p)) continue;
    grid.push_back(std::move(p));
    ++made;
  }
}

void add_pools(std::vector<SweepPoint>& grid, int count, Rng& rng) {
  for (int i = 0, made = 0; made < count; ++i) {
    const std::int64_t c = pick(rng, {16, 64, 128, 256});
    const std::int64_t hw = pick(rng, {14, 28, 56, 112});
    const std::int64_t k = pick(rng, {2, 3});
    const std::int64_t s = 2, pad = k == 3 ? 1 : 0;
    const std::int64_t p = pick(rng, divisors_up_to(c, 16));
    const std::int64_t max = i % 2 == 0 ? 1 : 0;
    SweepPoint pt;
    pt.name = numbered("pool", grid.size());
    pt.module = "mixtd_pool";
    pt.params = {{"C", c},
                 {"H", hw},
                 {"W", hw},
                 {"KH", k},
                 {"KW", k},
                 {"SH", s},
                 {"SW", s},
                 {"PH", pad},
                 {"PW", pad},
                 {"P", p},
                 {"MAX", max},
                 {"COUNT_PAD", 0},
                 {"CAP", arch::line_buffer_capacity(k, k, s, s, pad, pad, hw, hw)}};
    if (repeats(grid, pt)) continue;
    grid.push_back(std::move(pt));
    ++made;
  }
}

void add_fifos(std::vector<SweepPoint>& grid, const std::vector<std::pair<std::int64_t, std::int64_t>>& sizes) {
  for (const auto& [words, depth] : sizes) {
    SweepPoint p;
    p.name = numbered("fifo", grid.size());
    p.module = "mixtd_stream_fifo";
    p.params = {{"WIDTH", words * 8}, {"DEPTH", depth}};
    grid.push_back(std::move(p));
  }
}

// A group split (c channels into g strided groups) or merge (back): the
// whole stream's width divides c, a group stream's c/g.
std::vector<std::pair<std::string, std::int64_t>> split_or_merge_params(bool split, std::int64_t c, std::int64_t g,
                                                                        Rng& rng) {
  const std::int64_t w_in = pick(rng, divisors_up_to(split ? c : c / g, 8));
  const std::int64_t w_out = pick(rng, divisors_up_to(split ? c / g : c, 8));
  return {{"CHANNELS", c}, {"GROUPS", g}, {"W_IN", w_in}, {"W_OUT", w_out}};
}

// The streaming blocks around mixtd_stream_route: `groups` strided groups
// or copies, widths dividing the words of a port (at most 8 words, 64 bits).
void add_routes(std::vector<SweepPoint>& grid, const std::string& block, int count, Rng& rng) {
  for (int i = 0; i < count; ++i) {
    const std::int64_t g = pick(rng, {2, 4, 8});
    const std::int64_t c = g * pick(rng, {4, 8, 16});
    SweepPoint p;
    p.name = numbered(block, grid.size());
    p.module = "mixtd_" + block;
    if (block == "group_split" || block == "group_merge") {
      p.params = split_or_merge_params(block == "group_split", c, g, rng);
    } else if (block == "regroup") {
      const std::int64_t g_out = pick(rng, {2, 4, 8});
      const std::int64_t ch = std::lcm(g, g_out) * pick(rng, {2, 4, 8});
      p.params = {{"CHANNELS", ch},
                  {"G_IN", g},
                  {"G_OUT", g_out},
                  {"W_IN", pick(rng, divisors_up_to(ch / g, 8))},
                  {"W_OUT", pick(rng, divisors_up_to(ch / g_out, 8))}};
    } else if (block == "fork") {
      const std::int64_t w = pick(rng, divisors_up_to(c, 8));
      p.params = {{"CHANNELS", c}, {"COPIES", g}, {"W_IN", w}, {"W_OUT", w}};
    } else if (block == "relu") {
      const std::int64_t w = pick(rng, divisors_up_to(c, 8));
      p.params = {{"CHANNELS", c}, {"W_IN", w}, {"W_OUT", w}};
    } else if (block == "group_add") {
      const std::int64_t w = pick(rng, divisors_up_to(c, 8));
      p.params = {{"CHANNELS", c}, {"PARTIALS", g}, {"W_IN", w}, {"W_OUT", w}};
      p.images = {{"REQUANT_FILE", c, 40}};
    } else if (block == "eltwise_add") {
      const std::int64_t w = pick(rng, divisors_up_to(c, 8));
      p.params = {{"CHANNELS", c},      {"INPUTS", 2},           {"W_IN", w},      {"W_OUT", w},
                  {"EXPS", 0x0300 + i}, {"BIAS", -300 + 37 * i}, {"SHIFT", 3 + i}, {"RELU", i % 2}};
    } else if (block == "global_avg_pool") {
      p.params = {{"CHANNELS", c}, {"PIXELS", pick(rng, {49, 196})}, {"W", pick(rng, divisors_up_to(c, 8))}};
    } else {
      throw Error("internal: no sweep for block '" + block + "'");
    }
    grid.push_back(std::move(p));
  }
}

// The second batch of streaming blocks: what the first left constant varies
// (input and output widths apart, 2 or 3 elementwise inputs), repeats are
// skipped, and a block holds at most 128 words in its two-pixel buffer (the
// group add of 8 × 64 words took 943 s).
void add_varied_routes(std::vector<SweepPoint>& grid, const std::string& block, int count, Rng& rng) {
  for (int made = 0; made < count;) {
    const std::int64_t g = pick(rng, {2, 4, 8});
    const std::int64_t c = g * pick(rng, {2, 4, 8, 16});
    SweepPoint p;
    p.name = numbered(block, grid.size());
    p.module = "mixtd_" + block;
    std::int64_t held = c;  // words of one pixel over all input ports
    if (block == "group_split" || block == "group_merge") {
      p.params = split_or_merge_params(block == "group_split", c, g, rng);
    } else if (block == "regroup") {
      const std::int64_t g_out = pick(rng, {2, 4, 8});
      const std::int64_t ch = std::lcm(g, g_out) * pick(rng, {1, 2, 4, 8});
      held = ch;
      p.params = {{"CHANNELS", ch},
                  {"G_IN", g},
                  {"G_OUT", g_out},
                  {"W_IN", pick(rng, divisors_up_to(ch / g, 8))},
                  {"W_OUT", pick(rng, divisors_up_to(ch / g_out, 8))}};
    } else if (block == "fork") {
      held = c * g;
      p.params = {{"CHANNELS", c},
                  {"COPIES", g},
                  {"W_IN", pick(rng, divisors_up_to(c, 8))},
                  {"W_OUT", pick(rng, divisors_up_to(c, 8))}};
    } else if (block == "relu") {
      p.params = {
          {"CHANNELS", c}, {"W_IN", pick(rng, divisors_up_to(c, 8))}, {"W_OUT", pick(rng, divisors_up_to(c, 8))}};
    } else if (block == "group_add") {
      const std::int64_t partials = pick(rng, {2, 3, 4});
      held = c * partials;
      p.params = {{"CHANNELS", c},
                  {"PARTIALS", partials},
                  {"W_IN", pick(rng, divisors_up_to(c, 8))},
                  {"W_OUT", pick(rng, divisors_up_to(c, 8))}};
      p.images = {{"REQUANT_FILE", c, 40}};
    } else if (block == "eltwise_add") {
      const std::int64_t inputs = pick(rng, {2, 3});
      const std::int64_t i = static_cast<std::int64_t>(rng.below(8));
      held = c * inputs;
      p.params = {{"CHANNELS", c},
                  {"INPUTS", inputs},
                  {"W_IN", pick(rng, divisors_up_to(c, 8))},
                  {"W_OUT", pick(rng, divisors_up_to(c, 8))},
                  {"EXPS", inputs == 2 ? 0x0301 + i : 0x020301 + i},
                  {"BIAS", -300 + 37 * i},
                  {"SHIFT", 3 + i},
                  {"RELU", i % 2}};
    } else if (block == "global_avg_pool") {
      p.params = {{"CHANNELS", c}, {"PIXELS", pick(rng, {49, 196})}, {"W", pick(rng, divisors_up_to(c, 8))}};
    } else {
      throw Error("internal: no sweep for block '" + block + "'");
    }
    if (held > 128 || repeats(grid, p)) continue;
    grid.push_back(std::move(p));
    ++made;
  }
}

}  // namespace

std::int64_t SweepPoint::param(const std::string& key) const {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  throw Error("sweep point '" + name + "' (" + module + ") has no parameter " + key);
}

std::vector<SweepPoint> resource_sweep_grid() {
  std::vector<SweepPoint> grid;
  Rng rng(2026);
  const char* const routes[] = {"group_split", "group_merge", "regroup",     "fork",
                                "relu",        "group_add",   "eltwise_add", "global_avg_pool"};
  // The first batch (62 points; the second appends, so their rows stay).
  add_stages(grid, false, 12, rng);
  add_stages(grid, true, 4, rng);
  add_pools(grid, 6, rng);
  add_fifos(grid, {{1, 2}, {4, 2}, {16, 2}, {1, 16}, {4, 32}, {8, 64}, {16, 256}, {2, 1024}});
  for (const char* b : routes) add_routes(grid, b, 4, rng);
  // The second batch: at least 3 rows per fitted feature of every block
  // kind, and dense stages with many multipliers per output lane.
  add_stages(grid, true, 8, rng);
  add_pools(grid, 6, rng);
  add_fifos(grid, {{2, 4}, {8, 8}, {4, 128}, {16, 32}});
  for (const char* b : routes) add_varied_routes(grid, b, 8, rng);
  add_stages(grid, false, 8, rng, true);
  // The third batch: repacks (a FIFO's beats re-packed to the consumer's
  // width), narrowing and widening, odd widths too.
  for (const auto& [w_in, w_out] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 4},
                                                                                      {1, 16},
                                                                                      {3, 8},
                                                                                      {4, 2},
                                                                                      {8, 1},
                                                                                      {16, 4},
                                                                                      {2, 24},
                                                                                      {6, 64},
                                                                                      {16, 48},
                                                                                      {64, 16},
                                                                                      {24, 128},
                                                                                      {128, 32},
                                                                                      {12, 96},
                                                                                      {48, 8}}) {
    SweepPoint p;
    p.name = numbered("repack", grid.size());
    p.module = "mixtd_repack";
    p.params = {{"W_IN", w_in}, {"W_OUT", w_out}};
    grid.push_back(std::move(p));
  }
  return grid;
}

std::string sweep_grid_text(const std::vector<SweepPoint>& grid) {
  std::ostringstream os;
  for (const auto& p : grid) {
    os << p.name << ' ' << p.module;
    for (const auto& [k, v] : p.params) os << ' ' << k << '=' << v;
    for (const auto& im : p.images) os << " @" << im.param << ':' << im.depth << ':' << im.width_bits;
    os << '\n';
  }
  return os.str();
}

std::vector<YosysRow> read_yosys_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the yosys table (scripts/yosys-sweep writes it)");
  // The sweep's table, or a design's (scripts/yosys-sweep --design): one
  // row per distinct block, keyed by the hash of the rtl/lib it was
  // synthesised from, its memory images by content hash (@…, which the
  // model does not read: it prices images as random words).
  const std::string grid_header = "name,module,params,lut,ff,dsp,bram18,uram,seconds";
  const std::string design_header = "lib,module,params,instances,lut,ff,dsp,bram18,uram,seconds";
  bool design = false;
  std::string lib;
  std::string line;
  std::vector<YosysRow> rows;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (n == 1) {
      design = line == design_header;
      if (!design && line != grid_header)
        throw Error(where + "the header must be '" + grid_header + "' (the sweep's table) or '" + design_header +
                    "' (a design's, scripts/yosys-sweep --design), not '" + line + "'");
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    const std::size_t fields = design ? 10 : 9;
    if (f.size() != fields)
      throw Error(where + "expected " + std::to_string(fields) + " comma-separated fields, found " +
                  std::to_string(f.size()));
    if (design) {
      if (lib.empty()) lib = f[0];
      if (f[0] != lib)
        throw Error(where + "rows of two rtl/lib versions (" + lib + " and " + f[0] +
                    "): synthesise the design again with scripts/yosys-sweep --design");
      // One fit row per distinct block: what it costs once, not × instances.
      f.erase(f.begin() + 3);
      f[0] = "design:" + std::to_string(n);
    }
    YosysRow r;
    r.point.name = f[0];
    r.point.module = f[1];
    std::stringstream ps(f[2]);
    for (std::string kv; ps >> kv;) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw Error(where + "parameter '" + kv + "' is not NAME=VALUE");
      // A design's memory images (@hash) and Verilog constants (EXPS=16'h00ff)
      // are nothing the model reads.
      if (design && (kv.compare(eq + 1, 1, "@") == 0 || kv.find('\'') != std::string::npos)) continue;
      try {
        r.point.params.emplace_back(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
      } catch (const std::exception&) {
        throw Error(where + "parameter '" + kv + "' has no integer value");
      }
    }
    double* out[] = {&r.lut, &r.ff, &r.dsp, &r.bram18, &r.uram};
    for (int i = 0; i < 5; ++i) {
      try {
        std::size_t used = 0;
        *out[i] = std::stod(f[static_cast<std::size_t>(3 + i)], &used);
        if (used != f[static_cast<std::size_t>(3 + i)].size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw Error(where + "field " + std::to_string((design ? 5 : 4) + i) + " ('" +
                    f[static_cast<std::size_t>(3 + i)] + "') is not a number");
      }
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw Error(path + ": the yosys table has no rows");
  return rows;
}

ModelOfPoint model_of(const SweepPoint& p) {
  ModelOfPoint m;
  const auto v = [&](const char* k) { return p.param(k); };
  if (p.module == "mixtd_conv_stage") {
    const bool dw = v("DEPTHWISE") != 0;
    td::StageShape s;
    s.role = "conv";
    s.in_ch = v("C");
    s.out_ch = v("N");
    s.kh = v("KH"), s.kw = v("KW"), s.sh = v("SH"), s.sw = v("SW"), s.ph = v("PH"), s.pw = v("PW");
    s.depthwise = dw;
    s.groups = dw ? s.in_ch : 1;
    s.in = {s.in_ch, v("H"), v("W")};
    s.out = {s.out_ch, (v("H") + 2 * s.ph - s.kh) / s.sh + 1, (v("W") + 2 * s.pw - s.kw) / s.sw + 1};
    const arch::Psi psi{v("P_IN"), v("P_OUT"), v("FINE")};
    const arch::StageResources r = arch::stage_resources(s, psi, kBits, true);
    m.block = dw ? LogicBlock::DepthwiseStage : LogicBlock::Stage;
    m.features = arch::stage_logic_features(s, psi, r.weights);
    m.memory = r.weights.cost + r.line_buffer.cost;
    m.memory.dsp = r.total.dsp;
  } else if (p.module == "mixtd_pool") {
    m.block = LogicBlock::Pool;
    m.features = arch::pool_logic_features(v("KH"), v("KW"), v("P"));
    net::PoolAttrs a;
    a.kh = v("KH"), a.kw = v("KW"), a.sh = v("SH"), a.sw = v("SW"), a.ph = v("PH"), a.pw = v("PW");
    m.memory = arch::pool_line_buffers({v("C"), v("H"), v("W")}, a, v("P"), kBits);
    m.memory.dsp = static_cast<double>(arch::pool_dsps(v("MAX") == 0, v("P")));
  } else if (p.module == "mixtd_repack") {
    m.block = LogicBlock::Repack;
    m.features = arch::repack_logic_features(v("W_IN"), v("W_OUT"));
  } else if (p.module == "mixtd_stream_fifo") {
    m.block = LogicBlock::Fifo;
    m.features = {1.0, static_cast<double>(v("WIDTH") / 8), 0, 0};
    m.memory = arch::place_memory(v("DEPTH"), v("WIDTH")).cost;
  } else {
    arch::Module mod;
    mod.name = p.name;
    std::int64_t w_in = 0, w_out = 0, c = 0;
    if (p.module == "mixtd_global_avg_pool") {
      mod.kind = arch::ModuleKind::GlobalAvgPool;
      c = v("CHANNELS");
      w_in = w_out = v("W");
    } else {
      c = v("CHANNELS");
      w_in = v("W_IN"), w_out = v("W_OUT");
      if (p.module == "mixtd_group_split") {
        mod.kind = arch::ModuleKind::Split, mod.ports_out = v("GROUPS");
      } else if (p.module == "mixtd_group_merge") {
        mod.kind = arch::ModuleKind::Merge, mod.ports_in = v("GROUPS"), c /= v("GROUPS");
      } else if (p.module == "mixtd_regroup") {
        mod.kind = arch::ModuleKind::RoundRobin, mod.ports_in = v("G_IN"), mod.ports_out = v("G_OUT");
        c /= v("G_IN");
      } else if (p.module == "mixtd_fork") {
        mod.kind = arch::ModuleKind::Fork, mod.ports_out = v("COPIES");
      } else if (p.module == "mixtd_relu") {
        mod.kind = arch::ModuleKind::ReLU;
      } else if (p.module == "mixtd_group_add") {
        mod.kind = arch::ModuleKind::GroupAdd, mod.ports_in = v("PARTIALS");
      } else if (p.module == "mixtd_eltwise_add") {
        mod.kind = arch::ModuleKind::EltwiseAdd, mod.ports_in = v("INPUTS");
      } else {
        throw Error("sweep point '" + p.name + "': the analytical model has no block for module '" + p.module + "'");
      }
    }
    mod.in_shape = {c, 1, 1};
    const arch::ModuleLogic l = arch::stream_module_logic(mod, w_in, w_out);
    m.block = l.block;
    m.features = l.features;
    if (mod.kind == arch::ModuleKind::GlobalAvgPool)
      m.memory.dsp = static_cast<double>(arch::global_avg_pool_dsps(w_in, v("PIXELS")));
  }
  m.total = m.memory + arch::logic_resources(m.block, m.features);
  return m;
}

namespace {

// Solves the k x k system a·x = b in place (Gaussian elimination, partial
// pivoting); false when it is singular.
bool solve(std::vector<std::vector<double>>& a, std::vector<double>& b) {
  const std::size_t k = b.size();
  for (std::size_t col = 0; col < k; ++col) {
    std::size_t best = col;
    for (std::size_t r = col + 1; r < k; ++r)
      if (std::abs(a[r][col]) > std::abs(a[best][col])) best = r;
    if (std::abs(a[best][col]) < 1e-12 * (1.0 + std::abs(a[0][0]))) return false;
    std::swap(a[col], a[best]);
    std::swap(b[col], b[best]);
    for (std::size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (std::size_t j = col; j < k; ++j) a[r][j] -= f * a[col][j];
      b[r] -= f * b[col];
    }
  }
  for (std::size_t i = 0; i < k; ++i) b[i] /= a[i][i];
  return true;
}

arch::LogicFeatures fit_one(const std::vector<arch::LogicFeatures>& x, const std::vector<double>& target,
                            const std::vector<double>& weight) {
  // The features that vary over the rows (the intercept always).
  std::vector<std::size_t> cols{0};
  for (std::size_t j = 1; j < static_cast<std::size_t>(arch::kLogicFeatures); ++j) {
    const auto [lo, hi] =
        std::minmax_element(x.begin(), x.end(), [&](const auto& a, const auto& b) { return a[j] < b[j]; });
    if ((*hi)[j] != (*lo)[j]) cols.push_back(j);
  }
  while (true) {
    const std::size_t k = cols.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k, 0.0));
    std::vector<double> b(k, 0.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double w2 = weight[i] * weight[i];
      for (std::size_t r = 0; r < k; ++r) {
        b[r] += w2 * x[i][cols[r]] * target[i];
        for (std::size_t c = 0; c < k; ++c) a[r][c] += w2 * x[i][cols[r]] * x[i][cols[c]];
      }
    }
    if (!solve(a, b)) {
      cols.pop_back();  // collinear: drop the last feature and solve again
      continue;
    }
    // No block may get cheaper as it grows (the solver would buy lanes to
    // save LUTs): a feature whose coefficient comes out negative, the most
    // negative first, is dropped and the rest refitted.
    std::size_t worst = 0;
    for (std::size_t r = 1; r < k; ++r)
      if (b[r] < 0 && (worst == 0 || b[r] < b[worst])) worst = r;
    if (worst != 0) {
      cols.erase(cols.begin() + static_cast<std::ptrdiff_t>(worst));
      continue;
    }
    arch::LogicFeatures out{};
    for (std::size_t r = 0; r < k; ++r) out[cols[r]] = std::round(b[r] * 100.0) / 100.0;
    return out;
  }
}

std::vector<const YosysRow*> rows_of(arch::LogicBlock block, const std::vector<YosysRow>& rows) {
  std::vector<const YosysRow*> out;
  for (const auto& r : rows)
    if (model_of(r.point).block == block) out.push_back(&r);
  return out;
}

}  // namespace

arch::LogicCoefficients fit_logic(arch::LogicBlock block, const std::vector<YosysRow>& rows) {
  const auto mine = rows_of(block, rows);
  if (mine.empty())
    throw Error("no rows of block '" + std::string(arch::logic_block_name(block)) + "' in the yosys table to fit");
  std::vector<arch::LogicFeatures> x;
  std::vector<double> lut, ff, wl, wf;
  for (const YosysRow* r : mine) {
    const ModelOfPoint m = model_of(r->point);
    x.push_back(m.features);
    lut.push_back(r->lut - m.memory.lut);
    ff.push_back(r->ff - m.memory.ff);
    wl.push_back(1.0 / std::max(r->lut, 16.0));
    wf.push_back(1.0 / std::max(r->ff, 16.0));
  }
  return {fit_one(x, lut, wl), fit_one(x, ff, wf)};
}

BlockErrors model_errors(arch::LogicBlock block, const std::vector<YosysRow>& rows, const arch::LogicCoefficients& c) {
  BlockErrors e;
  const auto add = [](ErrorSummary& s, double model, double yosys) {
    const double rel = std::abs(model - yosys) / std::max(yosys, 1.0);
    s.mean_abs += rel;
    s.max_abs = std::max(s.max_abs, rel);
    ++s.rows;
  };
  for (const YosysRow* r : rows_of(block, rows)) {
    const ModelOfPoint m = model_of(r->point);
    const arch::Resources t = m.memory + arch::logic_resources(m.features, c);
    add(e.lut, t.lut, r->lut);
    add(e.ff, t.ff, r->ff);
  }
  for (ErrorSummary* s : {&e.lut, &e.ff})
    if (s->rows > 0) s->mean_abs /= s->rows;
  return e;
}

}  // namespace mixtd::rtl
