#include "mixtd/arch/Design.h"

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "mixtd/support/Error.h"

namespace mixtd::arch {

namespace {

std::string list(const std::vector<std::int64_t>& v) {
  std::vector<long long> l(v.begin(), v.end());
  return join_ints(l);
}

bool is_mapped_kind(const net::Layer& l) {
  return l.kind == net::LayerKind::Conv2d || l.kind == net::LayerKind::Linear;
}

constexpr std::array<std::pair<WeightMemory, std::string_view>, 3> kWeightMemories{{
    {WeightMemory::Auto, "auto"},
    {WeightMemory::Bram, "bram"},
    {WeightMemory::Uram, "uram"},
}};

}  // namespace

std::string_view to_string(WeightMemory m) {
  for (const auto& [k, n] : kWeightMemories)
    if (k == m) return n;
  return "?";
}

std::optional<WeightMemory> parse_weight_memory(std::string_view s) {
  for (const auto& [k, n] : kWeightMemories)
    if (n == s) return k;
  return std::nullopt;
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  for (std::size_t k = d.size(); k-- > 0;)
    if (d[k] * d[k] != n) d.push_back(n / d[k]);
  return d;
}

td::LayerGeometry Design::geometry(const net::Layer& l) const {
  if (l.kind == net::LayerKind::Linear) return td::linear_geometry(l);
  return td::geometry(l, mapping(l.name).tau);
}

const LayerMapping& Design::mapping(const std::string& layer) const {
  auto it = layers.find(layer);
  if (it == layers.end()) throw Error("design '" + name + "': layer '" + layer + "' has no mapping (tau and stages)");
  return it->second;
}

Design make_design(net::Network network, const std::string& network_spec, Device device,
                   const std::string& device_spec) {
  Design d;
  d.name = network.name;
  d.network_spec = network_spec;
  d.network = std::move(network);
  d.network.infer_shapes();
  d.device_spec = device_spec;
  d.device = std::move(device);
  d.clock_mhz = d.device.clock_mhz;
  for (const auto& l : d.network.layers) {
    if (!is_mapped_kind(l)) continue;
    LayerMapping m;
    const auto g = l.kind == net::LayerKind::Linear ? td::linear_geometry(l) : td::geometry(l, m.tau);
    m.stages.assign(g.stages.size(), Psi{});
    d.layers[l.name] = m;
  }
  return d;
}

// Every check builds its message only when it fails: validate() runs on
// every analyse() and solve(), and the messages (legal-value lists) cost far
// more than the checks.
std::int64_t max_fifo_depth(const Design& d, std::int64_t width_words) {
  const double bits =
      static_cast<double>(std::max<std::int64_t>(1, width_words)) * static_cast<double>(std::max(1, d.bits.activation));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(memory_bits(d.device) / bits)));
}

void validate(const Design& d) {
  if (!(d.clock_mhz >= kMinClockMhz && d.clock_mhz <= kMaxClockMhz)) {
    std::ostringstream s;
    s << "design '" << d.name << "': clock_mhz = " << d.clock_mhz << ": legal " << clock_range();
    throw Error(s.str());
  }
  if (!(d.budget > 0 && d.budget <= 1.0))
    throw Error("design '" + d.name + "': budget must be in (0, 1], got " + std::to_string(d.budget));
  if (d.bits.weight < 1 || d.bits.weight > 16 || d.bits.activation < 1 || d.bits.activation > 16)
    throw Error("design '" + d.name + "': bits = {weight: " + std::to_string(d.bits.weight) +
                ", activation: " + std::to_string(d.bits.activation) + "}: legal widths 1 .. 16");
  // The narrowest stream (one word a beat) bounds every depth; parse_design
  // checks each stream at its own width.
  const std::int64_t cap = max_fifo_depth(d, 1);
  auto too_deep = [&](const std::string& what, std::int64_t depth) {
    return Error("design '" + d.name + "': " + what + " = " + std::to_string(depth) + ": legal 1 .. " +
                 std::to_string(cap) + " beats (device '" + d.device.name + "' has " +
                 std::to_string(static_cast<std::int64_t>(memory_bits(d.device))) + " bits of BRAM/URAM, " +
                 std::to_string(d.bits.activation) + " bits a word)");
  };
  if (d.fifo_depth < 1 || d.fifo_depth > cap) throw too_deep("fifo_depth", d.fifo_depth);
  for (const auto& [stream, depth] : d.fifo_depths)
    if (depth < 1 || depth > cap) throw too_deep("fifo_depths['" + stream + "']", depth);
  for (const auto& [name, m] : d.layers) {
    const net::Layer* l = d.network.find(name);
    if (l == nullptr)
      throw Error("design '" + d.name + "': layer '" + name + "' is not in network '" + d.network.name + "'");
    if (!is_mapped_kind(*l))
      throw Error("design '" + d.name + "': layer '" + name + "' is a " + std::string(net::to_string(l->kind)) +
                  "; only conv2d and linear layers are mapped");
  }
  for (const auto& l : d.network.layers) {
    if (!is_mapped_kind(l)) continue;
    const LayerMapping& m = d.mapping(l.name);
    if (l.kind != net::LayerKind::Conv2d && m.tau.decomposed())
      throw Error("layer '" + l.name + "': linear layers are not decomposed (tau must be none)");
    const auto g = d.geometry(l);  // checks τ
    if (m.stages.size() != g.stages.size())
      throw Error("layer '" + l.name + "': " + std::string(td::to_string(m.tau.type)) + " has " +
                  std::to_string(g.stages.size()) + " stage(s) but the design gives " +
                  std::to_string(m.stages.size()) + " ψ");
    for (std::size_t k = 0; k < g.stages.size(); ++k) {
      const auto& s = g.stages[k];
      const Psi& p = m.stages[k];
      auto where = [&] { return "layer '" + l.name + "' stage " + std::to_string(k) + " (" + s.role + ")"; };
      const std::int64_t in_unit = s.depthwise ? s.in_ch : s.in_per_group();
      if (!(p.p_in >= 1 && in_unit % p.p_in == 0))
        throw Error(where() + ": p_in = " + std::to_string(p.p_in) + " does not divide its " + std::to_string(in_unit) +
                    " input channels; legal p_in: " + list(divisors(in_unit)));
      if (s.depthwise) {
        if (p.p_out != p.p_in)
          throw Error(where() + ": a depthwise stage has p_out = p_in (" + std::to_string(p.p_in) +
                      "), got p_out = " + std::to_string(p.p_out));
      } else {
        const std::int64_t out_unit = s.out_ch / s.groups;
        if (!(p.p_out >= 1 && out_unit % p.p_out == 0))
          throw Error(where() + ": p_out = " + std::to_string(p.p_out) + " does not divide its " +
                      std::to_string(out_unit) + " output channels; legal p_out: " + list(divisors(out_unit)));
      }
      if (!(p.fine >= 1 && (s.kh * s.kw) % p.fine == 0))
        throw Error(where() + ": fine = " + std::to_string(p.fine) + " does not divide the " + std::to_string(s.kh) +
                    "x" + std::to_string(s.kw) + " kernel; legal fine: " + list(divisors(s.kh * s.kw)));
      if (p.weight_memory == WeightMemory::Uram && d.device.capacity.uram <= 0)
        throw Error(where() + ": weight_memory = uram, but device '" + d.device.name +
                    "' has no URAM; legal weight_memory: auto, bram");
    }
  }
}

}  // namespace mixtd::arch
