#include "mixtd/rtl/Generator.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "mixtd/arch/Analytical.h"
#include "mixtd/arch/Graph.h"
#include "mixtd/arch/Timing.h"
#include "mixtd/rtl/WeightStream.h"
#include "mixtd/sim/Functional.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"

namespace mixtd::rtl {

namespace {

std::string hex(std::uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string s(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = d[v & 15];
  return s;
}

std::uint64_t packed(const numerics::Requant& r) {
  return (std::uint64_t{r.relu} << 39) | (static_cast<std::uint64_t>(r.shift & 0x7f) << 32) |
         static_cast<std::uint32_t>(r.bias);
}

std::string identifier(const arch::Module& m, std::int64_t i) { return instance_name(m, i); }

const numerics::QLayer& qlayer(const numerics::QNetwork& q, const std::string& name) {
  for (const auto& l : q.layers)
    if (l.name == name) return l;
  throw Error("gen-rtl: the quantised network has no layer '" + name + "'");
}

std::string where(const arch::Module& m) {
  return "gen-rtl: module '" + m.name + "'" + (m.layer.empty() ? "" : " (layer '" + m.layer + "')");
}

// What every module instance exposes: PI input ports of WI words, PO output
// ports of WO words, as bus wires <name>_iv/_ir/_id and _ov/_or/_od.
struct Ports {
  std::int64_t pi = 1, wi = 1, po = 1, wo = 1;
};

Ports ports_of(const arch::Module& m) {
  Ports p{m.ports_in, m.width_in, m.ports_out, m.width_out};
  if (m.kind == arch::ModuleKind::HostIn) p.pi = 0;
  if (m.kind == arch::ModuleKind::HostOut) p.pi = p.po = 0;  // wired straight to the top's output
  return p;
}

// Refuses what the RTL library cannot build, before anything is written.
void check_mappable(const arch::Module& m) {
  using K = arch::ModuleKind;
  switch (m.kind) {
    case K::Stage: {
      const td::StageShape& s = m.shape;
      // Depthwise, or dense with `groups` conv groups (1: a plain conv): p_in
      // must divide a group's input channels, p_out its output channels.
      const std::int64_t groups = s.depthwise ? 1 : s.groups;
      require(groups >= 1 && s.in_ch % groups == 0 && s.out_ch % groups == 0,
              where(m) + ": " + std::to_string(s.groups) + " groups do not divide " + std::to_string(s.in_ch) +
                  " input and " + std::to_string(s.out_ch) + " output channels");
      require((s.in_ch / groups) % m.psi.p_in == 0, where(m) + ": p_in = " + std::to_string(m.psi.p_in) +
                                                        " must divide the " + std::to_string(s.in_ch / groups) +
                                                        " input channels" + (groups > 1 ? " of a group" : ""));
      require(s.depthwise || (s.out_ch / groups) % m.psi.p_out == 0,
              where(m) + ": p_out = " + std::to_string(m.psi.p_out) + " must divide the " +
                  std::to_string(s.out_ch / groups) + " output channels" + (groups > 1 ? " of a group" : ""));
      require((s.kh * s.kw) % m.psi.fine == 0, where(m) + ": fine = " + std::to_string(m.psi.fine) +
                                                   " must divide kh·kw = " + std::to_string(s.kh * s.kw));
      require(m.width_in == m.psi.p_in && m.width_out == (s.depthwise ? m.psi.p_in : m.psi.p_out),
              where(m) + ": port widths " + std::to_string(m.width_in) + "/" + std::to_string(m.width_out) +
                  " differ from its ψ");
      break;
    }
    case K::MaxPool:
    case K::AvgPool:
    case K::GlobalAvgPool:
      require(m.width_in == m.width_out, where(m) + ": input width " + std::to_string(m.width_in) +
                                             " differs from output width " + std::to_string(m.width_out));
      require(m.in_shape.c % m.width_in == 0, where(m) + ": width " + std::to_string(m.width_in) + " must divide " +
                                                  std::to_string(m.in_shape.c) + " channels");
      break;
    default:
      break;
  }
}

}  // namespace

// SystemVerilog identifiers: letters, digits, '_'; not starting with a digit.
std::string instance_name(const arch::Module& m, std::int64_t i) {
  std::string n = "u_" + m.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (m.count > 1) {
    n += '_';
    n += std::to_string(i);
  }
  return n;
}

std::string fifo_name(std::size_t stream, std::int64_t e) {
  return "q" + std::to_string(stream) + "_" + std::to_string(e);
}

std::string repack_name(std::size_t stream, std::int64_t e) { return fifo_name(stream, e) + "_repack"; }

std::string slice_name(std::size_t stream, std::int64_t e, bool source) {
  return fifo_name(stream, e) + (source ? "_slr_src" : "_slr_dst");
}

bool needs_repack(const arch::Graph& g, const arch::Stream& s) {
  return arch::consumer_repacks(g.modules[static_cast<std::size_t>(s.to)], s.width);
}

std::string stage_weight_image(const std::vector<std::int8_t>& weight, std::int64_t in_ch, std::int64_t out_ch,
                               std::int64_t kh, std::int64_t kw, bool depthwise, std::int64_t p_in, std::int64_t p_out,
                               std::int64_t fine, std::int64_t groups) {
  require(depthwise || (groups >= 1 && in_ch % (groups * p_in) == 0 && out_ch % (groups * p_out) == 0),
          "stage_weight_image: " + std::to_string(groups) + " groups with p_in = " + std::to_string(p_in) +
              ", p_out = " + std::to_string(p_out) + " do not divide " + std::to_string(in_ch) + " input and " +
              std::to_string(out_ch) + " output channels");
  // A dense block reads the channels of its group: cin = in_ch / groups of them.
  const std::int64_t cin = depthwise ? 1 : in_ch / groups;
  const std::int64_t kk = kh * kw, kch = kk / fine, cch = cin / p_in;
  require(static_cast<std::int64_t>(weight.size()) == out_ch * cin * kk,
          "stage_weight_image: " + std::to_string(weight.size()) + " weights for a " + std::to_string(out_ch) + "×" +
              std::to_string(cin) + "×" + std::to_string(kh) + "×" + std::to_string(kw) + " stage");
  std::string out;
  auto word = [&](const std::vector<std::int8_t>& lanes) {
    for (auto it = lanes.rbegin(); it != lanes.rend(); ++it) out += hex(static_cast<std::uint8_t>(*it), 2);
    out += '\n';
  };
  std::vector<std::int8_t> lanes;
  if (depthwise) {
    for (std::int64_t b = 0; b < in_ch / p_in; ++b)
      for (std::int64_t kc = 0; kc < kch; ++kc) {
        lanes.clear();
        for (std::int64_t m = 0; m < p_in; ++m)
          for (std::int64_t n = 0; n < fine; ++n)
            lanes.push_back(weight[static_cast<std::size_t>((b * p_in + m) * kk + kc * fine + n)]);
        word(lanes);
      }
    return out;
  }
  for (std::int64_t b = 0; b < out_ch / p_out; ++b)
    for (std::int64_t cc = 0; cc < cch; ++cc)
      for (std::int64_t kc = 0; kc < kch; ++kc) {
        lanes.clear();
        for (std::int64_t l = 0; l < p_out; ++l)
          for (std::int64_t m = 0; m < p_in; ++m)
            for (std::int64_t n = 0; n < fine; ++n)
              lanes.push_back(
                  weight[static_cast<std::size_t>(((b * p_out + l) * cin + cc * p_in + m) * kk + kc * fine + n)]);
        word(lanes);
      }
  return out;
}

std::string requant_image(const std::vector<numerics::Requant>& r, std::int64_t lanes) {
  require(lanes > 0 && static_cast<std::int64_t>(r.size()) % lanes == 0,
          "requant_image: " + std::to_string(r.size()) + " requantisers in lines of " + std::to_string(lanes));
  std::string out;
  for (std::size_t b = 0; b < r.size() / static_cast<std::size_t>(lanes); ++b) {
    for (std::int64_t l = lanes - 1; l >= 0; --l)
      out += hex(packed(r[b * static_cast<std::size_t>(lanes) + static_cast<std::size_t>(l)]), 10);
    out += '\n';
  }
  return out;
}

GeneratedRtl generate(const arch::Design& d, std::uint64_t seed, const numerics::FloatTensor& calibration,
                      const TopOptions& opts) {
  const WeightLoad weights = opts.weights;
  const arch::Report report = arch::analyse(d);  // validates the design (legal ψ, τ, device)
  const arch::Graph& g = report.graph;
  for (const auto& m : g.modules) check_mappable(m);
  {
    // Module names map to identifiers by replacing what SystemVerilog does
    // not allow with '_'; two names that map alike would wire one block twice.
    std::map<std::string, std::string> seen;
    for (const auto& m : g.modules) {
      const std::string id = identifier(m, 0);
      const auto [it, fresh] = seen.emplace(id, m.name);
      require(fresh, "gen-rtl: modules '" + it->second + "' and '" + m.name + "' both become the identifier '" + id +
                         "'; rename one of the layers");
    }
  }
  sim::FunctionalData data;
  data.calibration = calibration;
  const numerics::QNetwork q = sim::quantise(d, seed, data);

  GeneratedRtl out;
  out.top = "mixtd_top";
  out.weights = weights;
  std::ostringstream body, decl;
  std::vector<GeneratedFile> images;
  std::int64_t in_width = 0, out_width = 0;
  // WeightLoad::Stream: a memory gets the next ID and its image becomes a
  // segment of the weight stream; each loaded instance taps the load bus
  // one register further down the chain (load_1, load_2, …; load_0 is the
  // loader's output). Rom: the image is a file, the bus is tied off.
  const bool streamed = weights == WeightLoad::Stream;
  std::int64_t next_id = 1, taps = 0;
  auto memory = [&](const std::string& file, std::string image, std::int64_t width_bits) -> std::string {
    if (!streamed) {
      images.push_back({file, std::move(image)});
      return "\"" + file + "\"";
    }
    require(next_id <= kMaxLoadIds, "gen-rtl: more than 65535 memories to load");
    append_weight_segment(out.weight_stream, next_id, image, width_bits);
    ++out.weight_segments;
    return std::to_string(next_id++);
  };
  auto load_tap = [&]() -> std::string { return streamed ? "load_" + std::to_string(++taps) : "82'd0"; };

  // ---- block instances ------------------------------------------------------
  for (const auto& m : g.modules)
    for (std::int64_t i = 0; i < m.count; ++i) {
      const std::string n = identifier(m, i);
      const Ports p = ports_of(m);
      if (p.pi > 0)
        decl << "  logic [" << p.pi - 1 << ":0] " << n << "_iv, " << n << "_ir;\n  logic [" << p.pi * p.wi * 8 - 1
             << ":0] " << n << "_id;\n";
      if (p.po > 0)
        decl << "  logic [" << p.po - 1 << ":0] " << n << "_ov, " << n << "_or;\n  logic [" << p.po * p.wo * 8 - 1
             << ":0] " << n << "_od;\n";
      const std::string conn = "(\n      .clk, .rst_n, .in_valid(" + n + "_iv), .in_ready(" + n + "_ir), .in_data(" +
                               n + "_id),\n      .out_valid(" + n + "_ov), .out_ready(" + n + "_or), .out_data(" + n +
                               "_od)\n  );\n";
      // conn with the weight-load bus (stages and group adds).
      const auto with_load = [&](const std::string& bus) {
        return conn.substr(0, conn.size() - 6) + ", .load(" + bus + ")\n  );\n";
      };
      using K = arch::ModuleKind;
      switch (m.kind) {
        case K::HostIn:
          in_width = m.width_out;
          out.in_words = m.out_shape.numel();
          body << "  assign " << n << "_ov = in_valid;\n  assign in_ready = " << n << "_or;\n  assign " << n
               << "_od = in_data;\n";
          break;
        case K::HostOut:
          out.out_words = m.in_shape.numel();
          break;  // wired with its stream below
        case K::Stage: {
          ++out.instances;
          const td::StageShape& s = m.shape;
          const auto& ql = qlayer(q, m.layer);
          const numerics::QStage& qs =
              ql.chunks.at(static_cast<std::size_t>(i)).at(static_cast<std::size_t>(m.stage_index));
          const std::int64_t p_out = s.depthwise ? m.psi.p_in : m.psi.p_out;
          const std::int64_t wlanes = s.depthwise ? m.psi.p_in * m.psi.fine : p_out * m.psi.p_in * m.psi.fine;
          const std::string wmem = memory("mem/" + n + ".weights.hex",
                                          stage_weight_image(sim::stage_image(d, m, qs), s.in_ch, s.out_ch, s.kh, s.kw,
                                                             s.depthwise, m.psi.p_in, p_out, m.psi.fine, s.groups),
                                          8 * wlanes);
          const std::string rmem = memory("mem/" + n + ".requant.hex", requant_image(qs.requant, p_out), 40 * p_out);
          body << "  mixtd_conv_stage #(\n      .C(" << s.in_ch << "), .H(" << s.in.h << "), .W(" << s.in.w << "), .N("
               << s.out_ch << "), .KH(" << s.kh << "), .KW(" << s.kw << "), .SH(" << s.sh << "), .SW(" << s.sw
               << "), .PH(" << s.ph << "), .PW(" << s.pw << "),\n      .P_IN(" << m.psi.p_in << "), .P_OUT("
               << m.psi.p_out << "), .FINE(" << m.psi.fine << "), .DEPTHWISE(" << (s.depthwise ? 1 : 0) << "), "
               << (s.depthwise || s.groups == 1 ? "" : ".GROUPS(" + std::to_string(s.groups) + "), ") << ".CAP("
               << arch::line_buffer_capacity(s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.in.h, s.in.w) << "),\n      "
               << (streamed ? ".WEIGHT_ID(" + wmem + "), .REQUANT_ID(" + rmem + ")"
                            : ".WEIGHT_FILE(" + wmem + "), .REQUANT_FILE(" + rmem + ")")
               << "\n  ) " << n << " " << with_load(load_tap());
          break;
        }
        case K::MaxPool:
        case K::AvgPool: {
          ++out.instances;
          const auto& a = m.pool;
          const auto& s = m.in_shape;
          body << "  mixtd_pool #(\n      .C(" << s.c << "), .H(" << s.h << "), .W(" << s.w << "), .KH(" << a.kh
               << "), .KW(" << a.kw << "), .SH(" << a.sh << "), .SW(" << a.sw << "), .PH(" << a.ph << "), .PW(" << a.pw
               << "), .P(" << m.width_in << "),\n      .MAX(" << (m.kind == K::MaxPool ? 1 : 0) << "), .COUNT_PAD("
               << (a.count_include_pad ? 1 : 0) << "), .CAP("
               << arch::line_buffer_capacity(a.kh, a.kw, a.sh, a.sw, a.ph, a.pw, s.h, s.w) << ")\n  ) " << n << " "
               << conn;
          break;
        }
        case K::GlobalAvgPool:
          ++out.instances;
          body << "  mixtd_global_avg_pool #(.CHANNELS(" << m.in_shape.c << "), .PIXELS(" << m.in_shape.h * m.in_shape.w
               << "), .W(" << m.width_in << ")) " << n << " " << conn;
          break;
        case K::Split:
        case K::Merge:
        case K::RoundRobin: {
          ++out.instances;
          const std::int64_t channels = m.in_shape.c * m.ports_in;
          if (m.kind == K::Split)
            body << "  mixtd_group_split #(.CHANNELS(" << channels << "), .GROUPS(" << m.ports_out << ")";
          else if (m.kind == K::Merge)
            body << "  mixtd_group_merge #(.CHANNELS(" << channels << "), .GROUPS(" << m.ports_in << ")";
          else
            body << "  mixtd_regroup #(.CHANNELS(" << channels << "), .G_IN(" << m.ports_in << "), .G_OUT("
                 << m.ports_out << ")";
          body << ", .W_IN(" << m.width_in << "), .W_OUT(" << m.width_out << ")) " << n << " " << conn;
          break;
        }
        case K::Fork:
          ++out.instances;
          body << "  mixtd_fork #(.CHANNELS(" << m.in_shape.c << "), .COPIES(" << m.ports_out << "), .W_IN("
               << m.width_in << "), .W_OUT(" << m.width_out << ")) " << n << " " << conn;
          break;
        case K::ReLU:
          ++out.instances;
          body << "  mixtd_relu #(.CHANNELS(" << m.in_shape.c << "), .W_IN(" << m.width_in << "), .W_OUT("
               << m.width_out << ")) " << n << " " << conn;
          break;
        case K::GroupAdd: {
          ++out.instances;
          const auto& ql = qlayer(q, m.layer);
          std::vector<numerics::Requant> r;
          for (std::int64_t j = 0; j < m.out_shape.c; ++j)
            r.push_back(ql.group_add.at(static_cast<std::size_t>(i + j * ql.tau.g1)));
          const std::string rmem = memory("mem/" + n + ".requant.hex", requant_image(r, 1), 40);
          body << "  mixtd_group_add #(.CHANNELS(" << m.in_shape.c << "), .PARTIALS(" << m.ports_in << "), .W_IN("
               << m.width_in << "), .W_OUT(" << m.width_out << "), "
               << (streamed ? ".REQUANT_FILE(\"\"), .REQUANT_ID(" + rmem + ")" : ".REQUANT_FILE(" + rmem + ")") << ") "
               << n << " " << with_load(load_tap());
          break;
        }
        case K::EltwiseAdd: {
          ++out.instances;
          const auto& ql = qlayer(q, m.layer);
          require(static_cast<std::int64_t>(ql.in_exps.size()) == m.ports_in,
                  where(m) + ": " + std::to_string(ql.in_exps.size()) + " input exponents for " +
                      std::to_string(m.ports_in) + " ports");
          std::string exps;
          for (auto it = ql.in_exps.rbegin(); it != ql.in_exps.rend(); ++it) {
            require(*it >= -128 && *it <= 127, where(m) + ": exponent " + std::to_string(*it) + " beyond 8 bits");
            exps += hex(static_cast<std::uint8_t>(static_cast<std::int8_t>(*it)), 2);
          }
          body << "  mixtd_eltwise_add #(.CHANNELS(" << m.in_shape.c << "), .INPUTS(" << m.ports_in << "), .W_IN("
               << m.width_in << "), .W_OUT(" << m.width_out << "),\n      .EXPS(" << 8 * m.ports_in << "'h" << exps
               << "), .BIAS(" << ql.add_requant.bias << "), .SHIFT(" << ql.add_requant.shift << "), .RELU("
               << (ql.add_requant.relu ? 1 : 0) << ")) " << n << " " << conn;
          break;
        }
      }
    }

  // ---- streams: a FIFO per physical stream, fan-outs, re-packing -----------
  std::map<std::tuple<int, std::int64_t, std::int64_t>, std::vector<std::string>> fanout;  // producer port → FIFOs
  std::vector<std::int64_t> in_base(g.modules.size(), 0);
  for (std::size_t si = 0; si < g.streams.size(); ++si) {
    const arch::Stream& s = g.streams[si];
    const arch::Module& from = g.modules[static_cast<std::size_t>(s.from)];
    const arch::Module& to = g.modules[static_cast<std::size_t>(s.to)];
    require(s.width == from.width_out, "gen-rtl: stream '" + s.name + "' is " + std::to_string(s.width) +
                                           " words wide, its producer writes " + std::to_string(from.width_out));
    const std::int64_t k = s.count / to.count;
    for (std::int64_t e = 0; e < s.count; ++e) {
      const std::string f = fifo_name(si, e);
      const std::int64_t pi = e % from.count, pport = e / from.count;
      const std::int64_t ci = e / k, cport = in_base[static_cast<std::size_t>(s.to)] + e % k;
      const std::int64_t w = s.width * 8;
      // The input side is visible to the co-simulation driver (a stream probe).
      decl << "  logic " << f << "_iv /*verilator public_flat_rd*/, " << f << "_ir /*verilator public_flat_rd*/, " << f
           << "_ov, " << f << "_or;\n  logic [" << w - 1 << ":0] " << f << "_id /*verilator public_flat_rd*/, " << f
           << "_od;  // " << s.name << "\n";
      const auto inst = [](const arch::Module& mod, std::int64_t i) {
        return mod.count > 1 ? mod.name + "[" + std::to_string(i) + "]" : mod.name;
      };
      out.streams.push_back({f, s.count > 1 ? s.name + "[" + std::to_string(e) + "]" : s.name, inst(from, pi),
                             inst(to, ci), s.width, s.words, std::max<std::int64_t>(1, from.out_shape.h),
                             std::max<std::int64_t>(1, from.out_shape.w)});
      body << "  mixtd_stream_fifo #(.WIDTH(" << w << "), .DEPTH(" << s.depth << ")) " << f
           << " (\n      .clk, .rst_n, .in_valid(" << f << "_iv), .in_ready(" << f << "_ir), .in_data(" << f
           << "_id),\n      .out_valid(" << f << "_ov), .out_ready(" << f << "_or), .out_data(" << f << "_od)\n  );\n";
      const std::string c = identifier(to, ci);
      // Across SLRs: producer → slice (its SLR) → slice (the consumer's) → FIFO.
      const auto slr_from = opts.slr.find(identifier(from, pi)), slr_to = opts.slr.find(c);
      if (slr_from != opts.slr.end() && slr_to != opts.slr.end() && slr_from->second != slr_to->second) {
        const std::string a = slice_name(si, e, true), b = slice_name(si, e, false);
        for (const std::string& x : {a, b})
          decl << "  logic " << x << "_iv, " << x << "_ir;\n  logic [" << w - 1 << ":0] " << x << "_id;\n";
        body << "  mixtd_reg_slice #(.WIDTH(" << w << ")) " << a << " (\n      .clk, .rst_n, .in_valid(" << a
             << "_iv), .in_ready(" << a << "_ir), .in_data(" << a << "_id),\n      .out_valid(" << b
             << "_iv), .out_ready(" << b << "_ir), .out_data(" << b << "_id)\n  );\n"
             << "  mixtd_reg_slice #(.WIDTH(" << w << ")) " << b << " (\n      .clk, .rst_n, .in_valid(" << b
             << "_iv), .in_ready(" << b << "_ir), .in_data(" << b << "_id),\n      .out_valid(" << f
             << "_iv), .out_ready(" << f << "_ir), .out_data(" << f << "_id)\n  );\n";
        fanout[{s.from, pi, pport}].push_back(a);
        out.slices += 2;
        out.slice_slr[a] = slr_from->second;
        out.slice_slr[b] = slr_to->second;
      } else {
        fanout[{s.from, pi, pport}].push_back(f);
      }
      if (to.kind == arch::ModuleKind::HostOut) {
        out_width = s.width;
        body << "  assign out_valid = " << f << "_ov;\n  assign " << f << "_or = out_ready;\n  assign out_data = " << f
             << "_od;\n";
        continue;
      }
      const std::int64_t wi = to.width_in;
      const std::string slice = "[" + std::to_string(cport) + "]";
      const std::string dslice = "[" + std::to_string(cport * wi * 8) + "+:" + std::to_string(wi * 8) + "]";
      if (!needs_repack(g, s)) {
        body << "  assign " << c << "_iv" << slice << " = " << f << "_ov;\n  assign " << f << "_or = " << c << "_ir"
             << slice << ";\n  assign " << c << "_id" << dslice << " = " << f << "_od;\n";
      } else {
        body << "  mixtd_repack #(.W_IN(" << s.width << "), .W_OUT(" << wi << ")) " << repack_name(si, e) << " (\n"
             << "      .clk, .rst_n, .in_valid(" << f << "_ov), .in_ready(" << f << "_or), .in_data(" << f
             << "_od),\n      .out_valid(" << c << "_iv" << slice << "), .out_ready(" << c << "_ir" << slice
             << "), .out_data(" << c << "_id" << dslice << ")\n  );\n";
      }
    }
    in_base[static_cast<std::size_t>(s.to)] += k;
  }
  // A producer port drives all its FIFOs at once (a fan-out waits for every
  // ready, as sc::OutPort does).
  for (const auto& [key, fifos] : fanout) {
    const auto& [mi, pi, pport] = key;
    const arch::Module& m = g.modules[static_cast<std::size_t>(mi)];
    const std::string n = identifier(m, pi);
    const std::int64_t w = m.width_out * 8;
    std::string all = "1'b1";
    for (const auto& f : fifos) all += " & " + f + "_ir";
    body << "  assign " << n << "_or[" << pport << "] = " << all << ";\n";
    for (const auto& f : fifos)
      body << "  assign " << f << "_iv = " << n << "_ov[" << pport << "] & " << n << "_or[" << pport << "];\n  assign "
           << f << "_id = " << n << "_od[" << pport * w << "+:" << w << "];\n";
  }
  require(in_width > 0 && out_width > 0, "gen-rtl: the design has no host input or output stream");
  out.in_width = in_width;
  out.out_width = out_width;

  std::ostringstream top;
  top << "// Generated by mixtd gen-rtl from design '" << d.name << "' (" << g.modules.size() << " modules, "
      << out.instances << " block instances, " << g.streams.size() << " streams).\n"
      << "// Input: " << out.in_words << " words per frame, " << in_width << " per beat; output: " << out.out_words
      << " words per frame, " << out_width << " per beat (rtl/lib: the blocks; docs/rtl.md).\n"
      << "module " << out.top << " (\n    input  logic clk,\n    input  logic rst_n,\n"
      << "    input  logic in_valid,\n    output logic in_ready,\n    input  logic [" << in_width * 8 - 1
      << ":0] in_data,\n    output logic out_valid,\n    input  logic out_ready,\n    output logic ["
      << out_width * 8 - 1 << ":0] out_data" << (streamed ? ",\n" : "\n");
  if (streamed) {
    // The weight stream (WeightStream.h) and the loader's counts; a
    // register per loaded instance along the chain (docs/rtl.md).
    top << "    input  logic load_valid,\n    output logic load_ready,\n    input  logic [63:0] load_data,\n"
        << "    output logic [15:0] load_segments,\n    output logic [15:0] load_bad\n";
    decl << "  logic [" << kLoadBusBits - 1 << ":0] load_0";
    for (std::int64_t t = 1; t <= taps; ++t) decl << ", load_" << t;
    decl << ";\n";
    body << "  mixtd_weight_loader weight_loader (\n      .clk, .rst_n, .in_valid(load_valid), .in_ready(load_ready), "
            ".in_data(load_data),\n      .load(load_0), .segments(load_segments), .bad(load_bad)\n  );\n";
    for (std::int64_t t = 1; t <= taps; ++t)
      body << "  always_ff @(posedge clk) load_" << t << " <= rst_n ? load_" << t - 1 << " : " << kLoadBusBits
           << "'d0;\n";
  }
  top << ");\n" << decl.str() << body.str() << "endmodule\n";

  out.files.push_back({out.top + ".sv", top.str()});
  std::string list;
  for (const auto& f : library()) {
    out.files.push_back({"lib/" + f.path, f.text});
    list += "lib/" + f.path + "\n";
  }
  list += out.top + ".sv\n";
  for (auto& im : images) out.files.push_back(std::move(im));
  out.files.push_back({"files.f", list});
  out.hash = hash_files(out.files);
  return out;
}

std::uint64_t hash_files(const std::vector<GeneratedFile>& files) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& f : files) h = hash_string(std::to_string(h) + f.path + '\0' + f.text);
  return h;
}

void write(const GeneratedRtl& g, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  for (const auto& f : g.files) {
    const fs::path p = dir / f.path;
    fs::create_directories(p.parent_path());
    const fs::path tmp = p.string() + ".tmp";
    {
      std::ofstream o(tmp, std::ios::binary);
      o << f.text;
      o.flush();
      require(static_cast<bool>(o), "gen-rtl: cannot write " + tmp.string());
    }
    fs::rename(tmp, p);
  }
}

}  // namespace mixtd::rtl
