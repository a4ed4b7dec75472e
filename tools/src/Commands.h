// Every subcommand registers itself on the root CLI11 app and returns the
// callback that runs it. Callbacks return the process exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace mixtd::cli {

using Run = std::function<int()>;

Run add_info(CLI::App& app);
Run add_zoo(CLI::App& app);
Run add_convert(CLI::App& app);
Run add_candidates(CLI::App& app);
Run add_decompose(CLI::App& app);
Run add_report(CLI::App& app);
Run add_solve(CLI::App& app);
Run add_train(CLI::App& app);
Run add_accuracy(CLI::App& app);
Run add_finetune(CLI::App& app);
Run add_simulate(CLI::App& app);
Run add_dataset(CLI::App& app);
Run add_predictor(CLI::App& app);
Run add_gen_rtl(CLI::App& app);
Run add_cosim(CLI::App& app);
Run add_package(CLI::App& app);
Run add_resources(CLI::App& app);
Run add_search(CLI::App& app);
Run add_fitness_study(CLI::App& app);
Run add_flow(CLI::App& app);

}  // namespace mixtd::cli
