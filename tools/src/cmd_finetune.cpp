// mixtd finetune — fine-tune the decomposed, BFP8 network of a design
// (straight-through fake-quant) and write its weights.
#include <iostream>
#include <optional>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/arch/Design.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Model.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"
#include "mixtd/td/Factors.h"

namespace mixtd::cli {

void load_for_accuracy(const std::string& spec, const std::string& weights, net::Network& net, nn::Taus& taus);
bool is_design_file(const std::string& path);
std::optional<td::Factors> design_factors(const std::string& spec);

namespace {

// --factors and --design-out: the trained factors as they are, and the
// input design naming the written network and them, so that the hardware
// models compute with these values rather than a new decomposition.
void write_factors(const std::string& spec, const std::string& onnx, const std::string& factors,
                   const std::string& design_out, const nn::Model& m) {
  if (factors.empty()) return;
  td::save_factors(factors, m.decompositions(), m.activation_exponents());
  std::cout << "wrote " << factors << "\n";
  if (design_out.empty()) return;
  arch::save_design_with_weights(arch::load_design(spec), design_out, onnx, factors);
  std::cout << "wrote " << design_out << "\n";
}

}  // namespace

Run add_finetune(CLI::App& app) {
  auto* cmd = app.add_subcommand("finetune", "Fine-tune a design's decomposed BFP8 network on a data set");
  struct Args {
    std::string spec, weights, out, optimizer = "adam", schedule = "cosine";
    nn::DataConfig data;
    std::int64_t epochs = 1, batch = 128, progress = 50, calib = 16, max_images = 0;
    double lr = 1e-4, wd = 0;
    std::uint64_t seed = 0;
    int threads = 2;
    bool flt = false;
    std::string factors, design_out, correction = nn::to_string(nn::kSearchCorrection), checkpoint;
    double alpha = 0.9, temperature = 4;
    bool resume = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DESIGN_OR_NET", a->spec, "design.yaml (τ per layer) or a network")->required();
  cmd->add_option("--weights", a->weights, "trained weights (.onnx) for the design's network");
  cmd->add_option("-o,--output", a->out, "fine-tuned network (.onnx, dense weights = the factors' product)")
      ->required();
  auto* factors = cmd->add_option("--factors", a->factors, "also write the trained factors (.factors, exactly)");
  cmd->add_option("--design-out", a->design_out, "also write the input design on the -o network and --factors (.yaml)")
      ->needs(factors);
  cmd->add_option("--epochs", a->epochs, "epochs")->capture_default_str()->check(in_range(1, 100000));
  cmd->add_option("--max-images", a->max_images, "train on only the first N (shuffled) train images (0: all)")
      ->capture_default_str()
      ->check(in_range(0, 1000000000));
  cmd->add_option("--batch", a->batch, "batch size")->capture_default_str()->check(in_range(1, 65536));
  cmd->add_option("--lr", a->lr, "peak learning rate")->capture_default_str()->check(in_range(0.0, 10.0));
  cmd->add_option("--weight-decay", a->wd, "L2 weight decay")->capture_default_str()->check(in_range(0.0, 1.0));
  cmd->add_option("--optimizer", a->optimizer, "adam | sgd")->capture_default_str();
  cmd->add_option("--schedule", a->schedule, "cosine | step | constant")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of shuffling and flips")->capture_default_str();
  cmd->add_option("--threads", a->threads, "LibTorch threads")->capture_default_str()->check(in_range(1, 256));
  cmd->add_option("--progress", a->progress, "batches between progress lines (0: none)")
      ->capture_default_str()
      ->check(in_range(0, 1000000000));
  cmd->add_option("--calib", a->calib, "search images calibrating the BFP8 exponents")
      ->capture_default_str()
      ->check(in_range(std::int64_t{1}, std::int64_t{100000}));
  add_dataset_options(cmd, a->data, "the data set fine-tuned on");
  cmd->add_flag("--float", a->flt, "fine-tune the float decomposed network (no fake-quant)");
  cmd->add_option("--alpha", a->alpha,
                  "weight of the distillation term: KL to the undecomposed network's soft outputs at "
                  "--temperature (0: plain cross-entropy)")
      ->capture_default_str()
      ->check(in_range(0.0, 1.0));
  cmd->add_option("--temperature", a->temperature, "distillation temperature")
      ->capture_default_str()
      ->check(in_range(0.1, 100.0));
  cmd->add_option("--correction", a->correction,
                  "statistics correction of the decomposed layers before training (none | bias | scale; "
                  "the search's, docs/search.md); a design that names its factors starts from those")
      ->capture_default_str();
  auto* ckpt = cmd->add_option("--checkpoint", a->checkpoint, "write the training state here after every epoch");
  cmd->add_flag("--resume", a->resume, "continue from --checkpoint")->needs(ckpt);
  cmd->footer(
      "The stage factors (and biases) are the trained parameters; BFP8 activation exponents stay\n"
      "those calibrated before training, weight exponents follow the weights. The output ONNX\n"
      "holds each decomposed layer as the dense product of its factors, and decomposing that again\n"
      "does not give them back (CPD finds other, approximate factors; SVD the product up to signs).\n"
      "--factors writes the factors themselves with the activation exponents they were trained at,\n"
      "and --design-out the input design naming the ONNX and them (`factors:`, docs/design-yaml.md):\n"
      "accuracy, simulate, gen-rtl, cosim and package then compute with exactly the trained weights\n"
      "at exactly those exponents (docs/accuracy.md, \"Fine-tuned factors\").\n\n"
      "Example:\n"
      "  mixtd finetune configs/designs/fmnist-medium.yaml --weights configs/networks/resnet18-fmnist-w0.25.onnx \\\n"
      "      --epochs 1 -o /tmp/medium-ft.onnx --factors /tmp/medium-ft.factors --design-out /tmp/medium-ft.yaml");
  return [a] {
    check_output_file(a->out, "--output");
    if (!a->factors.empty()) check_output_file(a->factors, "--factors");
    if (!a->design_out.empty()) {
      check_output_file(a->design_out, "--design-out");
      require(is_design_file(a->spec),
              "--design-out: '" + a->spec + "' is not a design.yaml (a network has no τ to keep)");
      require(a->out.ends_with(".onnx"), "--design-out names -o '" + a->out + "' as its network: legal an .onnx");
    }
    net::Network n;
    nn::Taus taus;
    load_for_accuracy(a->spec, a->weights, n, taus);
    const nn::DataSplit split = load_dataset(a->data, n, true, "finetune");
    std::cerr << "data: " << split.description << std::endl;
    nn::OracleOptions oo;
    oo.calibration = a->calib;
    oo.quantize = !a->flt;
    oo.correction = nn::parse_stats_correction(a->correction);
    nn::AccuracyOracle oracle(n, split.search, oo);
    if (auto f = design_factors(a->spec)) oracle.set_factors(std::move(f->layers), std::move(f->exponents));
    nn::Model m = oracle.build(taus);
    const double before_val = m.accuracy(split.validation), before = m.accuracy(split.test);
    std::cerr << "before: validation " << fixed(100 * before_val, 2) << "%, test " << fixed(100 * before, 2) << "%"
              << std::endl;
    nn::TrainOptions o;
    o.epochs = a->epochs;
    o.batch = a->batch;
    o.lr = a->lr;
    o.weight_decay = a->wd;
    o.optimizer = a->optimizer;
    o.schedule = a->schedule;
    o.seed = a->seed;
    o.threads = a->threads;
    o.progress_every = a->progress;
    o.checkpoint = a->checkpoint;
    o.resume = a->resume;
    nn::Model teacher = oracle.teacher();
    if (a->alpha > 0) o.distill = {&teacher, a->temperature, a->alpha};
    const nn::Dataset* train = &split.train;
    nn::Dataset part;
    if (a->max_images > 0 && a->max_images < split.train.size()) {
      std::vector<std::int64_t> idx(static_cast<std::size_t>(a->max_images));
      for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int64_t>(i);
      part = split.train.subset(idx);
      train = &part;
    }
    m.train(*train, o);
    double after_val = m.accuracy(split.validation), after = m.accuracy(split.test);
    if (after_val < before_val) {
      // The choice is the validation split's: a short fine-tune of a design
      // the correction already brought close can end below its start.
      std::cerr << "fine-tuned validation top-1 " << fixed(100 * after_val, 2) << "% is below the start's "
                << fixed(100 * before_val, 2) << "%: writing the start" << std::endl;
      m = oracle.build(taus);
      after_val = before_val;
      after = before;
    }
    net::save_onnx(m.to_network(), a->out);
    write_factors(a->spec, a->out, a->factors, a->design_out, m);
    // The written network, decomposed again as the design says.
    nn::OracleOptions plain = oo;
    plain.correction = nn::StatsCorrection::None;
    nn::AccuracyOracle reload(m.to_network(), split.search, plain);
    const double again = reload.build(taus).accuracy(split.test);
    std::cout << "wrote " << a->out << "\n"
              << "                 validation       test\n"
              << "before           " << fixed(100 * before_val, 2) << "%           " << fixed(100 * before, 2) << "%\n"
              << "after            " << fixed(100 * after_val, 2) << "%           " << fixed(100 * after, 2) << "%\n"
              << "re-decomposed    "
              << "                 " << fixed(100 * again, 2)
              << "%  (the written ONNX, decomposed and calibrated again)\n";
    return 0;
  };
}

}  // namespace mixtd::cli
