// mixtd zoo — list the built-in networks.
#include <iostream>

#include "Commands.h"
#include "Table.h"
#include "mixtd/net/Counts.h"
#include "mixtd/net/Zoo.h"

namespace mixtd::cli {

Run add_zoo(CLI::App& app) {
  auto* cmd = app.add_subcommand("zoo", "List the built-in networks (usable wherever NET is asked for)");
  cmd->footer(
      "A zoo spec may carry options: NAME[:key=value,...] with keys width (channel multiplier),\n"
      "classes (classifier outputs) and seed (weight seed). Example: resnet18-fmnist:width=0.25");
  return [] {
    Table t;
    t.add_column("name", Table::Align::Left);
    t.add_column("input", Table::Align::Left);
    t.add_column("params");
    t.add_column("MACs");
    t.add_column("description", Table::Align::Left);
    for (const auto& e : net::zoo_entries()) {
      const net::Network n = net::build_zoo(e.name);
      const auto c = net::counts(n);
      t.add_row({e.name, n.input_shape.str(), with_commas(c.params), with_commas(c.macs), e.description});
    }
    t.print(std::cout);
    return 0;
  };
}

}  // namespace mixtd::cli
