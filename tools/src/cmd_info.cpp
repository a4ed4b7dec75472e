// mixtd info — per-layer shapes and counts of a network, and its totals.
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "Table.h"
#include "mixtd/net/Counts.h"
#include "mixtd/net/Load.h"

namespace mixtd::cli {

namespace {

nlohmann::json to_json(const net::Network& n, net::Bits bits) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : n.layers) {
    const auto c = net::counts(l);
    layers.push_back({{"name", l.name},
                      {"kind", std::string(net::to_string(l.kind))},
                      {"inputs", l.inputs},
                      {"in_shape", {l.in_shape.c, l.in_shape.h, l.in_shape.w}},
                      {"out_shape", {l.out_shape.c, l.out_shape.h, l.out_shape.w}},
                      {"weights", c.weights},
                      {"biases", c.biases},
                      {"params", c.params()},
                      {"macs", c.macs},
                      {"weight_bits", net::weight_memory_bits(c.params(), bits)},
                      {"bitops", net::bitops(c.macs, bits)}});
  }
  const auto t = net::counts(n);
  return {{"network", n.name},
          {"input_shape", {n.input_shape.c, n.input_shape.h, n.input_shape.w}},
          {"bits", {{"weight", bits.weight}, {"activation", bits.activation}}},
          {"layers", layers},
          {"totals",
           {{"params", t.params},
            {"macs", t.macs},
            {"conv_layers", t.conv_layers},
            {"linear_layers", t.linear_layers},
            {"weight_bits", net::weight_memory_bits(t.params, bits)},
            {"weight_mbit", net::weight_memory_bits(t.params, bits) / 1e6},
            {"bitops", net::bitops(t.macs, bits)},
            {"gbitops", net::bitops(t.macs, bits) / 1e9}}}};
}

}  // namespace

Run add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Per-layer shapes, parameters and MACs of a network, with totals");
  auto spec = std::make_shared<std::string>();
  auto bits_text = std::make_shared<std::string>("8,8");
  auto json = std::make_shared<bool>(false);
  cmd->add_option("NET", *spec, "zoo name (see `mixtd zoo`), .yaml description or .onnx model")->required();
  cmd->add_option("--bits", *bits_text, "weight,activation widths in bits for memory and BitOPs")
      ->capture_default_str();
  cmd->add_flag("--json", *json, "machine-readable output on stdout");
  cmd->footer(
      "Weight memory counts every parameter (weights and biases) at W bits; BitOPs = 2*W*A*MACs\n"
      "(Mixed-TD, Table II). Mb = 10^6 bits, G = 10^9.\n\n"
      "Examples:\n  mixtd info resnet18 --bits 8,8\n  mixtd info resnet18-fmnist:width=0.25 --json\n"
      "  mixtd info model.onnx");
  return [=] {
    const net::Bits bits = net::parse_bits(*bits_text);
    const net::Network n = net::load_network(*spec, /*with_weights=*/false);
    if (*json) {
      std::cout << to_json(n, bits).dump(2) << '\n';
      return 0;
    }
    Table t;
    t.add_column("layer", Table::Align::Left);
    t.add_column("kind", Table::Align::Left);
    t.add_column("input", Table::Align::Left);
    t.add_column("in shape");
    t.add_column("out shape");
    t.add_column("params");
    t.add_column("MACs");
    for (const auto& l : n.layers) {
      const auto c = net::counts(l);
      std::string ins;
      for (const auto& i : l.inputs) ins += (ins.empty() ? "" : ",") + i;
      t.add_row({l.name, std::string(net::to_string(l.kind)), ins, l.in_shape.str(), l.out_shape.str(),
                 c.params() ? with_commas(c.params()) : "", c.macs ? with_commas(c.macs) : ""});
    }
    const auto tot = net::counts(n);
    t.add_rule();
    t.add_row({"total", std::to_string(n.layers.size()) + " layers", "", n.input_shape.str(), "",
               with_commas(tot.params), with_commas(tot.macs)});
    std::cout << "network " << n.name << ": input " << n.input_shape.str() << ", " << tot.conv_layers << " conv, "
              << tot.linear_layers << " linear\n\n";
    t.print(std::cout);
    std::cout << "\nat W" << bits.weight << "A" << bits.activation << ": weight memory "
              << fixed(net::weight_memory_bits(tot.params, bits) / 1e6, 1) << " Mb, "
              << fixed(net::bitops(tot.macs, bits) / 1e9, 1) << " G BitOPs, " << fixed(tot.macs / 1e9, 3)
              << " G MACs per image\n";
    return 0;
  };
}

}  // namespace mixtd::cli
