// mixtd train — train a network on Fashion-MNIST with LibTorch and export it
// as ONNX (BatchNorm folded), with its float and BFP8 test accuracy.
#include <iostream>

#include "CliChecks.h"
#include "Commands.h"
#include "DataOptions.h"
#include "Table.h"
#include "mixtd/net/Load.h"
#include "mixtd/net/Onnx.h"
#include "mixtd/net/Zoo.h"
#include "mixtd/nn/Data.h"
#include "mixtd/nn/Model.h"
#include "mixtd/support/Error.h"
#include "mixtd/support/OutputPath.h"

namespace mixtd::cli {

Run add_train(CLI::App& app) {
  auto* cmd = app.add_subcommand("train", "Train a network on a data set (LibTorch, CPU) and write ONNX");
  struct Args {
    std::string spec, out, checkpoint, optimizer = "sgd", schedule = "cosine";
    nn::DataConfig data;
    std::int64_t epochs = 1, batch = 128, progress = 50;
    double lr = 0.05, wd = 5e-4;
    std::uint64_t seed = 0;
    int threads = 2;
    bool resume = false, no_bn = false, no_flip = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("NET", a->spec, "zoo spec, .yaml or .onnx (its weights are the start point with --no-bn)")
      ->required();
  add_dataset_options(cmd, a->data, "the data set trained on");
  cmd->add_option("-o,--output", a->out, "trained network (.onnx)")->required();
  cmd->add_option("--epochs", a->epochs, "epochs")->capture_default_str()->check(in_range(1, 100000));
  cmd->add_option("--batch", a->batch, "batch size")->capture_default_str()->check(in_range(1, 65536));
  cmd->add_option("--lr", a->lr, "peak learning rate")->capture_default_str()->check(in_range(0.0, 10.0));
  cmd->add_option("--weight-decay", a->wd, "L2 weight decay")->capture_default_str()->check(in_range(0.0, 1.0));
  cmd->add_option("--optimizer", a->optimizer, "sgd (momentum 0.9, Nesterov) | adam")->capture_default_str();
  cmd->add_option("--schedule", a->schedule, "cosine | step | constant")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of initial weights, shuffling and flips")->capture_default_str();
  cmd->add_option("--threads", a->threads, "LibTorch threads")->capture_default_str()->check(in_range(1, 256));
  cmd->add_option("--progress", a->progress, "batches between progress lines (0: none)")
      ->capture_default_str()
      ->check(in_range(0, 1000000000));
  cmd->add_option("--checkpoint", a->checkpoint, "checkpoint written after every epoch (default: OUTPUT.ckpt)");
  cmd->add_flag("--resume", a->resume, "continue from the checkpoint");
  cmd->add_flag("--no-bn", a->no_bn,
                "train without BatchNorm (default: a BatchNorm after every conv, folded on export)");
  cmd->add_flag("--no-flip", a->no_flip, "no random horizontal flips");
  cmd->footer(
      "The split: the training part shuffled with --split-seed; the first --search-size are the search\n"
      "set (never trained on), the rest are trained on; the test part is the test set.\n\n"
      "Example (the shipped configs/networks/resnet18-fmnist-w0.25.onnx):\n"
      "  OMP_WAIT_POLICY=PASSIVE mixtd train resnet18-fmnist:width=0.25 --dataset fmnist --epochs 6 --lr 0.05 \\\n"
      "      -o configs/networks/resnet18-fmnist-w0.25.onnx");
  return [a] {
    check_output_file(a->out, "--output");
    check_output_file(a->checkpoint.empty() ? a->out + ".ckpt" : a->checkpoint, "--checkpoint");
    std::string spec = a->spec;
    if (net::is_zoo_spec(spec) && spec.find("seed=") == std::string::npos)
      spec += (spec.find(':') == std::string::npos ? ":seed=" : ",seed=") + std::to_string(a->seed);
    net::Network n = net::load_network(spec, /*with_weights=*/true);
    n.fold_batchnorm();
    const nn::DataSplit split = load_dataset(a->data, n, true, "train");
    std::cerr << "data: " << split.description << std::endl;
    nn::ModelOptions mo;
    mo.batchnorm = !a->no_bn;
    nn::Model m(n, nullptr, nullptr, mo);
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
    o.flip = !a->no_flip;
    o.checkpoint = a->checkpoint.empty() ? a->out + ".ckpt" : a->checkpoint;
    o.resume = a->resume;
    o.on_epoch = [&](std::int64_t ep, double loss, double acc) {
      const double test = m.accuracy(split.test);
      std::cerr << "epoch " << ep << ": train loss " << fixed(loss, 4) << ", train acc " << fixed(100 * acc, 2)
                << "%, test acc " << fixed(100 * test, 2) << "%" << std::endl;
    };
    std::cerr << "training " << n.name << " (" << m.parameter_count() << " parameters) on " << split.train.size()
              << " images, " << o.epochs << " epoch(s)" << std::endl;
    const auto r = m.train(split.train, o);
    net::Network trained = m.to_network();
    net::save_onnx(trained, a->out);
    nn::Model fm(trained);
    const double f_test = fm.accuracy(split.test), f_search = fm.accuracy(split.search);
    nn::AccuracyOracle oracle(trained, split.search);
    nn::Model qm = oracle.build({});
    const double q_test = qm.accuracy(split.test);
    std::cout << "wrote " << a->out << "\n"
              << "epochs " << r.epochs_run << ", last epoch " << fixed(r.seconds_per_epoch, 1) << " s\n"
              << "float test top-1   " << fixed(100 * f_test, 2) << "%\n"
              << "float search top-1 " << fixed(100 * f_search, 2) << "%\n"
              << "BFP8 test top-1    " << fixed(100 * q_test, 2) << "%\n";
    return 0;
  };
}

}  // namespace mixtd::cli
