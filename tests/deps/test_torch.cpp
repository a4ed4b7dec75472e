// LibTorch proof: a forward pass of a small conv net on the CPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

TEST(LibTorch, ConvForward) {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)), torch::nn::ReLU(),
                            torch::nn::AdaptiveAvgPool2d(1), torch::nn::Flatten(), torch::nn::Linear(4, 2));
  torch::Tensor x = torch::randn({3, 1, 8, 8});
  torch::Tensor y = net->forward(x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
  y.sum().backward();  // autograd works
}

}  // namespace
