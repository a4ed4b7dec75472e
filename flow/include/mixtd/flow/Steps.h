// The flow's steps (issue 23, docs/flow.md): network → search → finetune →
// simulate → rtl → cosim → package → report, each the `mixtd` subcommands a
// user would type, run in the flow's folder with relative paths, so every
// artefact is the one the command itself writes and a step can be rerun by
// hand from its log. Planning only: Runner.h runs them.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "mixtd/flow/FlowConfig.h"

namespace mixtd::flow {

struct Command {
  std::vector<std::string> args;         // after the executable: {"search", "NET", ...}; empty: in_process
  std::string stdout_file;               // relative to the flow folder: stdout goes there (else to the log)
  std::vector<std::string> resume_args;  // appended when the step resumes its own earlier attempt
  std::string resume_when;               // ... and this file (its checkpoint, relative) exists
  std::function<void(const std::filesystem::path& flow_dir)> in_process;
  std::string tag;  // what the hash covers of an in_process command
};

struct Step {
  std::string name;
  std::vector<Command> commands;
  std::vector<std::string> outputs;   // relative to the flow folder; all must exist afterwards
  std::vector<std::string> inputs;    // user files (absolute) whose contents the hash covers
  std::vector<std::string> products;  // earlier steps' artefacts (relative) whose contents it covers too
  bool resumable = false;             // keeps its folder across an interrupted attempt (search, train)
  bool skipped = false;               // nothing to do in this flow (e.g. cosim with 0 frames)
  std::string skip_reason;
  // One line from the step's artefacts, for the terminal and the report.
  std::function<std::string(const std::filesystem::path& flow_dir)> summarise;
  // Checks the artefacts beyond their existence (throws mixtd::Error).
  std::function<void(const std::filesystem::path& flow_dir)> check;
};

// The step names, in order.
const std::vector<std::string>& step_names();

// The steps of `c` (the report step excluded: the runner writes it).
std::vector<Step> plan_steps(const FlowConfig& c);

// The design the later steps use (relative to the flow folder).
inline constexpr const char* kFinalDesign = "finetune/design.yaml";

}  // namespace mixtd::flow
