// mixtd candidates — per-layer decomposition candidates and the size of the
// design space (SPEC "Decomposition", Mixed-TD §V).
#include <iostream>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "Table.h"
#include "mixtd/net/Load.h"
#include "mixtd/support/Error.h"
#include "mixtd/td/Candidates.h"
#include "mixtd/td/Geometry.h"

namespace mixtd::cli {

Run add_candidates(CLI::App& app) {
  auto* cmd = app.add_subcommand("candidates", "Per-layer decomposition candidates and the design-space size");
  auto spec = std::make_shared<std::string>();
  auto groups = std::make_shared<std::string>("paper");
  auto json = std::make_shared<bool>(false);
  auto list = std::make_shared<std::string>();
  cmd->add_option("NET", *spec, "zoo name, .yaml or .onnx")->required();
  cmd->add_option("--groups", *groups,
                  "channel-group options: paper (svd-filter grouped along inputs or outputs, others ungrouped), "
                  "none (g1 = g2 = 1), all (every g1 | N, g2 | C with g1*g2 <= 64)")
      ->capture_default_str()
      ->check(CLI::IsMember({"paper", "none", "all"}));
  cmd->add_option("--list", *list, "print every candidate τ of this layer");
  cmd->add_flag("--json", *json, "machine-readable output");
  cmd->footer(
      "Ranks: for MAC ratios 30%, 35%, ..., 70% of the original layer, the rank nudged to the one\n"
      "with most divisors within half a step. Decomposable layers: dense convs with a spatial\n"
      "kernel and more than 3 input channels; the others stay undecomposed.\n\n"
      "Examples:\n  mixtd candidates resnet18\n  mixtd candidates resnet18 --list layer4.1.conv1");
  return [=] {
    td::CandidateOptions o;
    o.groups = *groups == "paper"  ? td::GroupPolicy::Paper
               : *groups == "none" ? td::GroupPolicy::Ungrouped
                                   : td::GroupPolicy::All;
    const net::Network n = net::load_network(*spec, false);
    if (!list->empty()) {
      const net::Layer* l = n.find(*list);
      require(l != nullptr, "--list: no layer '" + *list + "' in network '" + n.name + "'");
      for (const auto& t : td::layer_candidates(*l, o)) {
        const auto g = td::geometry(*l, t);
        std::cout << t.str() << "  params " << g.params() << "  MACs " << g.macs() << '\n';
      }
      return 0;
    }
    const auto ds = td::design_space(n, o);
    if (*json) {
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& s : ds.layers)
        layers.push_back({{"layer", s.layer},
                          {"svd_filter", s.svd_filter},
                          {"svd_spatial", s.svd_spatial},
                          {"cpd", s.cpd},
                          {"total", s.total()}});
      std::cout << nlohmann::json{{"network", n.name},
                                  {"groups", *groups},
                                  {"layers", layers},
                                  {"log10_size", ds.log10_size}}
                       .dump(2)
                << '\n';
      return 0;
    }
    Table t;
    t.add_column("layer", Table::Align::Left);
    t.add_column("shape", Table::Align::Left);
    t.add_column("svd-filter");
    t.add_column("svd-spatial");
    t.add_column("cpd");
    t.add_column("total (+none)");
    for (const auto& s : ds.layers) {
      const net::Layer* l = n.find(s.layer);
      const std::string shape = std::to_string(l->in_shape.c) + "->" + std::to_string(l->conv.out_channels) + " " +
                                std::to_string(l->conv.kh) + "x" + std::to_string(l->conv.kw) + " @" +
                                std::to_string(l->out_shape.h) + "x" + std::to_string(l->out_shape.w);
      t.add_row({s.layer, shape, std::to_string(s.svd_filter), std::to_string(s.svd_spatial), std::to_string(s.cpd),
                 std::to_string(s.total())});
    }
    t.print(std::cout);
    std::cout << "\n"
              << ds.layers.size() << " decomposable layers of " << n.layers.size()
              << "; design space: " << ds.size_str() << " choices of τ (groups: " << *groups << ")\n";
    return 0;
  };
}

}  // namespace mixtd::cli
