// The search's short fine-tune (Model.h, ShortFinetune).
#include <numeric>

#include "mixtd/nn/Model.h"
#include "mixtd/support/Error.h"

namespace mixtd::nn {

TrainResult short_finetune(Model& m, Model& teacher, const Dataset& train, const ShortFinetune& f) {
  require(f.images >= 0, "fine-tune images " + std::to_string(f.images) + ": legal 0 (all) or more");
  TrainOptions to;
  to.epochs = f.epochs;
  to.lr = f.lr;
  to.optimizer = "adam";
  to.weight_decay = 0;
  to.seed = f.seed;
  to.threads = f.threads;
  to.progress_every = 0;
  if (f.alpha > 0) to.distill = {&teacher, f.temperature, f.alpha};
  if (f.images == 0 || f.images >= train.size()) return m.train(train, to);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(f.images));
  std::iota(idx.begin(), idx.end(), std::int64_t{0});
  return m.train(train.subset(idx), to);
}

}  // namespace mixtd::nn
