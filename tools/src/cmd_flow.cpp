// mixtd flow — the whole flow of one network as named, resumable steps
// (flow/, docs/flow.md): network → search → finetune → simulate → rtl →
// cosim → package → report, each step the `mixtd` command a user would
// type, skipped when its inputs are unchanged, the report at the end.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "mixtd/flow/BuildReport.h"
#include "mixtd/flow/FlowConfig.h"
#include "mixtd/flow/Runner.h"
#include "mixtd/flow/Steps.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

namespace {

std::string today() {
  const std::time_t t = std::time(nullptr);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return b;
}

// This executable, for the steps to run (not whatever `mixtd` is on PATH).
std::string self() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("flow: cannot find this executable (/proc/self/exe): " + ec.message());
  return p.string();
}

}  // namespace

Run add_flow(CLI::App& app) {
  auto* cmd = app.add_subcommand("flow",
                                 "The whole flow of one network: search, fine-tune, SystemC, RTL, co-simulation, "
                                 "U250 package and a report, as resumable steps");
  struct Args {
    std::string file, out, from, until;
    std::string force;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("FLOW", a->file, "FLOW.yaml (configs/flows/ has ready-made ones)")->required();
  cmd->add_option("-o,--output", a->out, "the flow's folder (default: out/NAME, NAME from the flow)");
  cmd->add_option("--from", a->from, "rerun from this step (the steps before it must be up to date)");
  cmd->add_option("--until", a->until, "stop after this step");
  cmd->add_option("--force", a->force, "rerun these steps even if their inputs are unchanged: STEP[,STEP...]");
  cmd->footer(
      "Steps: network (load or train; float and BFP8 top-1), search (mixtd search), finetune (and the\n"
      "decomposed and fine-tuned top-1), simulate (SystemC, functional, against the golden executor),\n"
      "rtl (gen-rtl), cosim (Verilator), package (the U250 folder), report (report.html, report.json).\n"
      "Each step writes DIR/STEP/ (log.txt holds the commands it ran and their output) and a stamp;\n"
      "a step whose commands and inputs are unchanged is skipped, so rerunning after an interruption\n"
      "resumes where it stopped, and changing target_fps reruns search and everything after it.\n\n"
      "Examples:\n"
      "  mixtd flow configs/flows/demo-fmnist.yaml -o out/demo\n"
      "  mixtd flow configs/flows/demo-fmnist.yaml -o out/demo --from simulate\n"
      "  mixtd flow configs/flows/fmnist-zc706.yaml --until search\n"
      "  mixtd flow configs/flows/demo-fmnist.yaml -o out/demo --force simulate,cosim\n\n"
      "A FLOW.yaml (paths relative to it; docs/flow.md lists every key):\n\n" +
      flow::example_flow());
  return [a] {
    const flow::FlowConfig c = flow::load_flow(a->file);
    flow::RunOptions o;
    o.dir = a->out.empty() ? std::filesystem::path("out") / c.name : std::filesystem::path(a->out);
    check_output_dir(o.dir, "--output");
    o.executable = self();
    o.from = a->from;
    o.until = a->until;
    for (std::size_t at = 0; at < a->force.size();) {
      const std::size_t comma = std::min(a->force.find(',', at), a->force.size());
      if (comma > at) o.force.insert(a->force.substr(at, comma - at));
      at = comma + 1;
    }
    o.tty = ::isatty(1) != 0;
    std::cout << "flow " << c.name << " in " << o.dir.string() << "/\n" << std::flush;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<flow::StepOutcome> steps;
    std::string failure;
    try {
      steps = flow::run_steps(flow::plan_steps(c), o, std::cout);
    } catch (const Error& e) {
      failure = e.what();
      steps = flow::recorded_steps(o.dir);
    }
    // The report of what exists, also after a failure.
    flow::StepOutcome rep;
    rep.name = "report";
    rep.status = report::StepStatus::ran;
    rep.summary = "report.html, report.json";
    steps.push_back(rep);
    flow::write_report(flow::build_report(c, o.dir, steps, today()), o.dir);
    if (!failure.empty()) throw Error(failure);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[" << steps.size() << "/" << steps.size() << "] report: " << (o.dir / "report.html").string()
              << " (and report.json)\nflow " << c.name << " done in " << static_cast<long>(s + 0.5) << " s\n";
    return 0;
  };
}

}  // namespace mixtd::cli
