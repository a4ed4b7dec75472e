// Runs the flow's steps like a build system (issue 23, docs/flow.md): each
// step's hash covers its commands, the contents of the user files it reads
// and the hash of the step before it; a step whose stamp (.flow/STEP.json,
// written atomically once its artefacts are complete) carries the same hash
// is skipped. So an interrupted flow resumes at the step it was in (search
// and train continue from their own checkpoints), and changing a setting
// reruns the first step that uses it and everything after.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "mixtd/flow/Steps.h"
#include "mixtd/report/FlowReport.h"

namespace mixtd::flow {

struct RunOptions {
  std::filesystem::path dir;    // the flow's folder (created)
  std::string executable;       // the mixtd binary the steps run
  std::string from, until;      // "": the first / the last step
  std::set<std::string> force;  // rerun these even when unchanged
  bool tty = false;             // redraw a progress line (else one line per step)
};

struct StepOutcome {
  std::string name;
  report::StepStatus status = report::StepStatus::not_run;
  double seconds = 0;
  std::string summary;
  std::uint64_t hash = 0;
};

// Runs the steps; `out` gets one summary line per step (and, on a tty, the
// progress line). Throws mixtd::Error "step 'NAME': …" when a step fails
// (its log is DIR/NAME/log.txt); the steps before it keep their stamps.
std::vector<StepOutcome> run_steps(const std::vector<Step>& steps, const RunOptions& o, std::ostream& out);

// The outcomes recorded in DIR/.flow (for a report of a flow run earlier).
std::vector<StepOutcome> recorded_steps(const std::filesystem::path& dir);

}  // namespace mixtd::flow
