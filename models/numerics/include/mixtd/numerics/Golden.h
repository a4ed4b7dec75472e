// The integer golden executor: runs a QNetwork on int8 data with nothing
// but plain loops and the rules of Bfp8.h. It is the reference the SystemC
// model and the RTL are compared against, so it is written to be obviously
// right, not fast.
#pragma once

#include <map>
#include <string>

#include "mixtd/numerics/Quantized.h"
#include "mixtd/numerics/Tensor.h"

namespace mixtd::numerics::golden {

// One stage: int8 in, int32 accumulate, requantise per output channel.
Int8Tensor run_stage(const Int8Tensor& x, const QStage& stage);

// The chain of stages of one chunk.
Int8Tensor run_engine(const Int8Tensor& x, const std::vector<QStage>& stages);

// One layer on its input tensors (Add takes several).
Int8Tensor run_layer(const QLayer& layer, const std::vector<const Int8Tensor*>& inputs);

// The whole network. If `all` is given it receives every layer's output.
Int8Tensor run_network(const QNetwork& q, const Int8Tensor& input, std::map<std::string, Int8Tensor>* all = nullptr);

}  // namespace mixtd::numerics::golden
