// mixtd accuracy — top-1 of a (decomposed, BFP8) network on one batch of
// search images (the search's oracle) or on the whole test set.
#include <chrono>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Model.h"
#include "mixtd/nn/Npy.h"
#include "mixtd/numerics/Golden.h"
#include "mixtd/support/AtomicFile.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"
#include "mixtd/td/Factors.h"

namespace mixtd::cli {

// Shared with cmd_finetune.cpp.
bool is_design_file(const std::string& path) {
  if (!(path.ends_with(".yaml") || path.ends_with(".yml"))) return false;
  const std::string text = read_file(path);
  return text.starts_with("design:") || text.find("\ndesign:") != std::string::npos;
}

namespace {

// The network of `shape` carrying the weights of `onnx`; every layer must fit.
net::Network with_weights(const net::Network& shape, const std::string& onnx) {
  net::Network w = net::load_onnx(onnx);
  require(w.input_shape == shape.input_shape, onnx + ": input " + w.input_shape.str() + " does not fit network '" +
                                                  shape.name + "' input " + shape.input_shape.str());
  for (const auto& l : shape.layers) {
    const net::Layer* o = w.find(l.name);
    require(o != nullptr, onnx + ": has no layer '" + l.name + "' of network '" + shape.name + "'");
    require(o->kind == l.kind && o->out_shape == l.out_shape && o->in_shape == l.in_shape,
            onnx + ": layer '" + l.name + "' is " + std::string(net::to_string(o->kind)) + " " + o->in_shape.str() +
                " -> " + o->out_shape.str() + ", the network has " + std::string(net::to_string(l.kind)) + " " +
                l.in_shape.str() + " -> " + l.out_shape.str());
  }
  require(w.layers.size() == shape.layers.size(), onnx + ": " + std::to_string(w.layers.size()) + " layers, network '" +
                                                      shape.name + "' has " + std::to_string(shape.layers.size()));
  return w;
}

}  // namespace

// Shared with cmd_finetune.cpp: NET or design.yaml (+ --weights) -> network with weights and τ.
void load_for_accuracy(const std::string& spec, const std::string& weights, net::Network& net, nn::Taus& taus) {
  if (is_design_file(spec)) {
    const arch::Design d = arch::load_design(spec);
    for (const auto& [name, m] : d.layers)
      if (m.tau.decomposed()) taus[name] = m.tau;
    if (!weights.empty()) {
      net = with_weights(d.network, weights);
    } else {
      net = net::load_network(d.network_path(), true);
      require(net.same_structure(d.network), spec + ": network '" + d.network_spec + "' did not load as the design's");
    }
  } else {
    net = weights.empty() ? net::load_network(spec, true) : with_weights(net::load_network(spec, false), weights);
  }
  net.fold_batchnorm();
}

// Shared with cmd_finetune.cpp: the factors a design.yaml names (`factors:`)
// and the activation exponents they carry, if any.
std::optional<td::Factors> design_factors(const std::string& spec) {
  if (!is_design_file(spec)) return std::nullopt;
  const arch::Design d = arch::load_design(spec);
  if (d.factors_spec.empty()) return std::nullopt;
  td::Factors f;
  f.layers = td::load_factors(d.factors_path(), &f.exponents);
  return f;
}

Run add_accuracy(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "accuracy", "Top-1 of a decomposed BFP8 network on a data set (Fashion-MNIST, NPY, CIFAR-10, image folders)");
  struct Args {
    std::string spec, weights, predictions;
    nn::DataConfig data;
    std::int64_t batch = 128, index = 0, calib = 16, golden = 0;
    bool full = false, flt = false, json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN_OR_NET", a->spec, "design.yaml (τ per layer) or a network (zoo spec, .yaml, .onnx)")
      ->required();
  cmd->add_option("--weights", a->weights, "trained weights (.onnx) for the design's network");
  cmd->add_option("--batch", a->batch, "images in the one-batch query")->capture_default_str();
  cmd->add_option("--index", a->index, "which search batch (0..)")->capture_default_str();
  cmd->add_option("--calib", a->calib, "search images calibrating the BFP8 exponents")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, std::int64_t{100000}));
  add_dataset_options(cmd, a->data, "the images");
  cmd->add_flag("--full", a->full, "the whole test set instead of one search batch");
  cmd->add_option("--predictions", a->predictions,
                  "with --full: write the top-1 class of every test image to this .npy (int64)");
  cmd->add_flag("--float", a->flt, "float (decomposed) network, no BFP8");
  cmd->add_flag("--json", a->json, "machine-readable output");
  cmd->add_option("--golden", a->golden,
                  "also run the integer golden executor on the first N test images and compare with fake-quant");
  cmd->footer(
      "The one-batch query is what the search ranks designs by: top-1 on search images\n"
      "[index*batch, (index+1)*batch), decomposed as design.yaml's τ say, BFP8 with exponents\n"
      "calibrated on the last --calib search images, not fine-tuned. A one-pool data set (an NPY\n"
      "pair, a flat image folder) is the search and the test set at once.\n\n"
      "Examples:\n"
      "  mixtd accuracy configs/networks/resnet18-fmnist-w0.25.onnx --full\n"
      "  mixtd accuracy configs/designs/fmnist-medium.yaml --weights configs/networks/resnet18-fmnist-w0.25.onnx\n"
      "  mixtd accuracy resnet18.onnx --dataset npy:images.npy,labels.npy --full --float   # docs/data.md\n"
      "  mixtd accuracy resnet18.onnx --dataset imagefolder:imagenet --batch 128           # DIR/train, DIR/val");
  return [a] {
    net::Network n;
    nn::Taus taus;
    load_for_accuracy(a->spec, a->weights, n, taus);
    require(a->predictions.empty() || a->full, "--predictions needs --full (the whole test set)");
    if (!a->predictions.empty()) check_output_file(a->predictions, "--predictions");
    const nn::DataSplit split = load_dataset(a->data, n, false, "accuracy");
    require(a->calib <= split.search.size(), "--calib " + std::to_string(a->calib) + ": legal 1.." +
                                                 std::to_string(split.search.size()) + " (the search set's size)");
    require(a->full || a->batch <= split.search.size(),
            "--batch " + std::to_string(a->batch) + ": the search set has " + std::to_string(split.search.size()) +
                " images (legal 1.." + std::to_string(split.search.size()) + ", or --full)");
    require(a->batch >= 1, "--batch " + std::to_string(a->batch) + ": legal 1.." + std::to_string(split.search.size()));
    nn::OracleOptions oo;
    oo.batch = a->full ? std::min(a->batch, split.search.size()) : a->batch;  // --full does not query
    oo.calibration = a->calib;
    oo.quantize = !a->flt;
    nn::AccuracyOracle oracle(n, split.search, oo);
    if (auto f = design_factors(a->spec)) oracle.set_factors(std::move(f->layers), std::move(f->exponents));
    oracle.decompose(taus);  // SVDs once, not in the timed query
    const auto t0 = std::chrono::steady_clock::now();
    double acc = 0;
    if (a->full) {
      nn::Model m = oracle.build(taus);
      std::vector<std::int64_t> pred;
      std::int64_t correct = 0;
      for (std::int64_t s = 0; s < split.test.size(); s += 256) {
        const auto p = m.predict(split.test.batch(s, 256));
        const auto l = split.test.batch_labels(s, 256);
        for (std::size_t i = 0; i < p.size(); ++i) correct += p[i] == l[i];
        pred.insert(pred.end(), p.begin(), p.end());
      }
      acc = static_cast<double>(correct) / static_cast<double>(split.test.size());
      if (!a->predictions.empty())
        nn::write_npy(a->predictions, "<i8", {static_cast<std::int64_t>(pred.size())}, pred.data(),
                      pred.size() * sizeof(std::int64_t));
    } else {
      acc = oracle.query(taus, a->index);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (a->golden > 0) {
      const auto q = oracle.quantize(taus);
      nn::Model m = oracle.build(taus);
      const auto x = split.test.batch(0, a->golden);
      const auto fq = m.forward(x);
      const auto gold = numerics::golden::run_network(q, numerics::quantize_tensor(x, q.input_exp));
      int out_exp = 0;
      for (const auto& l : q.layers)
        if (l.name == q.output) out_exp = l.out_exp;
      const auto g = numerics::dequantize_tensor(gold, out_exp);
      const auto pg = nn::argmax(g), pf = nn::argmax(fq);
      std::int64_t same = 0, within = 0;
      double worst = 0;
      for (std::size_t i = 0; i < pg.size(); ++i) same += pg[i] == pf[i];
      for (std::size_t i = 0; i < g.data.size(); ++i) {
        const double d = std::fabs(static_cast<double>(g.data[i]) - fq.data[i]);
        worst = std::max(worst, d);
        within += d <= std::ldexp(1.0, out_exp) * 1.0001;
      }
      std::cout << "golden vs fake-quant on " << x.n << " test images: top-1 agree " << same << "/" << x.n
                << ", logits within one step (2^" << out_exp << ") " << within << "/" << g.data.size() << ", worst "
                << worst << "\n";
    }
    const std::string what =
        a->full ? "test set (" + std::to_string(split.test.size()) + " images)"
                : "search batch " + std::to_string(a->index) + " (" + std::to_string(a->batch) + " images)";
    if (a->json) {
      std::cout << nlohmann::json{{"network", n.name},
                                  {"data", split.description},
                                  {"decomposed_layers", taus.size()},
                                  {"bfp8", !a->flt},
                                  {"full", a->full},
                                  {"images", a->full ? split.test.size() : a->batch},
                                  {"top1", acc},
                                  {"ms", ms}}
                       .dump(2)
                << '\n';
      return 0;
    }
    std::cout << "data: " << split.description << "\n";
    std::cout << n.name << ", " << taus.size() << " decomposed layer(s), " << (a->flt ? "float" : "BFP8") << ": top-1 "
              << fixed(100 * acc, 2) << "% on " << what << " (" << fixed(ms, 1) << " ms)\n";
    return 0;
  };
}

}  // namespace mixtd::cli
