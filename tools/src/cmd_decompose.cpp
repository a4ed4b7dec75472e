// mixtd decompose — one layer, one τ: parameters, MACs, reconstruction
// error and output error on a calibration batch.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "Commands.h"
#include "Table.h"
#include "mixtd/net/Counts.h"
#include "mixtd/net/Load.h"
#include "mixtd/numerics/Reference.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/Rng.h"
#include "mixtd/td/Decompose.h"

namespace mixtd::cli {

namespace {

double rel_error(const numerics::FloatTensor& ref, const numerics::FloatTensor& got) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < ref.data.size(); ++i) {
    const double d = static_cast<double>(ref.data[i]) - got.data[i];
    e += d * d;
    r += static_cast<double>(ref.data[i]) * ref.data[i];
  }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

// Fraction of images whose arg-max class agrees.
double top1_agreement(const numerics::FloatTensor& a, const numerics::FloatTensor& b) {
  std::int64_t agree = 0;
  const std::int64_t k = a.per_image();
  for (std::int64_t n = 0; n < a.n; ++n) {
    std::int64_t ia = 0, ib = 0;
    for (std::int64_t c = 1; c < k; ++c) {
      if (a.data[static_cast<std::size_t>(n * k + c)] > a.data[static_cast<std::size_t>(n * k + ia)]) ia = c;
      if (b.data[static_cast<std::size_t>(n * k + c)] > b.data[static_cast<std::size_t>(n * k + ib)]) ib = c;
    }
    agree += ia == ib;
  }
  return a.n ? static_cast<double>(agree) / static_cast<double>(a.n) : 0.0;
}

}  // namespace

Run add_decompose(CLI::App& app) {
  auto* cmd = app.add_subcommand("decompose", "Decompose one conv layer with one τ and measure the error");
  struct Args {
    std::string spec, layer, type = "svd-filter";
    std::int64_t g1 = 1, g2 = 1, rank = 0, calib = 8;
    std::uint64_t seed = 0;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("NET", a->spec, "zoo name, .yaml (with weights) or .onnx")->required();
  cmd->add_option("--layer", a->layer, "conv layer name (see `mixtd info NET`)")->required();
  cmd->add_option("--type", a->type, "svd-filter | svd-spatial | cpd | none")->capture_default_str();
  cmd->add_option("--g1", a->g1, "output-channel groups (g1 | N)")->capture_default_str();
  cmd->add_option("--g2", a->g2, "input-channel groups (g2 | C)")->capture_default_str();
  cmd->add_option("--rank", a->rank, "rank per chunk (1..bound; see `mixtd candidates NET --list LAYER`)");
  cmd->add_option("--calib", a->calib, "calibration images (seeded N(0,1) inputs)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the calibration images")->capture_default_str();
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->footer(
      "Reconstruction error: ||W - W'||_F / ||W||_F. Layer output error: the same on the layer's\n"
      "output for the calibration batch's real activations. Network output error: logits with\n"
      "only this layer decomposed, against the original network.\n\n"
      "Example:\n  mixtd decompose resnet18 --layer layer3.1.conv1 --type svd-filter --g2 4 --rank 32");
  return [a] {
    const auto type = td::parse_td_type(a->type);
    require(type.has_value(), "--type '" + a->type + "': legal: " + std::string(td::kTdTypeNames));
    require(a->calib >= 1 && a->calib <= 4096, "--calib " + std::to_string(a->calib) + ": legal 1..4096 images");
    net::Network n = net::load_network(a->spec, /*with_weights=*/true);
    const net::Layer* l = n.find(a->layer);
    if (!l) {
      std::vector<std::string> convs;
      for (const auto& x : n.layers)
        if (x.kind == net::LayerKind::Conv2d) convs.push_back(x.name);
      throw Error("--layer '" + a->layer + "': no such layer in network '" + n.name + "' (conv layers: " + join(convs) +
                  ")");
    }
    const td::Tau tau{*type, a->g1, a->g2, *type == td::TdType::None ? 0 : a->rank};
    // The decomposer's errors (no weights, non-finite weights, τ) name the
    // layer; the network's file is this command's to say.
    std::optional<td::Decomposer> dec_holder;
    try {
      dec_holder.emplace(*l);
    } catch (const Error& e) {
      throw Error(a->spec + ": " + e.what());
    }
    td::Decomposer& dec = *dec_holder;
    const td::DecomposedLayer d = dec.decompose(tau);  // checks τ
    const double recon = dec.relative_error(tau);

    Rng rng(a->seed);
    numerics::FloatTensor x(a->calib, n.input_shape);
    for (auto& v : x.data) v = static_cast<float>(rng.normal());
    const auto layer_in = numerics::run_float_until(n, x, l->inputs[0]);
    const auto y_ref =
        numerics::conv2d(layer_in, l->weight.data(), l->bias.empty() ? nullptr : l->bias.data(), l->conv.out_channels,
                         l->conv.kh, l->conv.kw, l->conv.sh, l->conv.sw, l->conv.ph, l->conv.pw, l->conv.groups);
    const auto y_dec = numerics::run_decomposed(layer_in, d);
    const double layer_err = rel_error(y_ref, y_dec);
    numerics::Decompositions only{{l->name, d}};
    const auto out_ref = numerics::run_float(n, x);
    const auto out_dec = numerics::run_float(n, x, &only);
    const double net_err = rel_error(out_ref, out_dec);
    const double agree = top1_agreement(out_ref, out_dec);

    const auto orig = td::geometry(*l, td::Tau{});
    const auto& g = d.geometry;
    if (a->json) {
      std::cout << nlohmann::json{{"network", n.name},
                                  {"layer", l->name},
                                  {"tau", tau.str()},
                                  {"params", g.params()},
                                  {"params_original", orig.params()},
                                  {"macs", g.macs()},
                                  {"macs_original", orig.macs()},
                                  {"reconstruction_error", recon},
                                  {"layer_output_error", layer_err},
                                  {"network_output_error", net_err},
                                  {"top1_agreement", agree},
                                  {"calibration_images", a->calib}}
                       .dump(2)
                << '\n';
      return 0;
    }
    std::cout << n.name << " / " << l->name << " (" << l->in_shape.c << "->" << l->conv.out_channels << ", "
              << l->conv.kh << "x" << l->conv.kw << ", out " << l->out_shape.str() << "): " << tau.str() << "\n\n";
    Table t;
    t.add_column("stage", Table::Align::Left);
    t.add_column("kernel");
    t.add_column("stride");
    t.add_column("channels");
    t.add_column("out (per chunk)");
    t.add_column("params");
    t.add_column("MACs");
    for (const auto& s : g.stages)
      t.add_row({s.role + (s.depthwise ? " (dw)" : ""), std::to_string(s.kh) + "x" + std::to_string(s.kw),
                 std::to_string(s.sh) + "x" + std::to_string(s.sw),
                 std::to_string(s.in_ch) + "->" + std::to_string(s.out_ch), s.out.str(), with_commas(s.weight_count()),
                 with_commas(s.macs())});
    t.print(std::cout);
    std::cout << "\n"
              << g.chunks() << " chunk(s) (g1=" << tau.g1 << " x g2=" << tau.g2 << ")\n"
              << "params  " << with_commas(g.params()) << " of " << with_commas(orig.params()) << " ("
              << fixed(100.0 * g.params() / orig.params(), 1) << "%)\n"
              << "MACs    " << with_commas(g.macs()) << " of " << with_commas(orig.macs()) << " ("
              << fixed(100.0 * g.macs() / orig.macs(), 1) << "%)\n"
              << "reconstruction error      " << fixed(recon, 5) << "\n"
              << "layer output error        " << fixed(layer_err, 5) << "  (" << a->calib << " calibration images)\n"
              << "network output error      " << fixed(net_err, 5) << ", top-1 agreement " << fixed(100.0 * agree, 1)
              << "%\n";
    return 0;
  };
}

}  // namespace mixtd::cli
