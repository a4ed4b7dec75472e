// Proofs for Armadillo (+LAPACK/OpenBLAS), Eigen, yaml-cpp and ONNX protobuf.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <yaml-cpp/yaml.h>

#include <Eigen/Dense>
#include <armadillo>

namespace {

TEST(Armadillo, SolvesLinearSystem) {
  arma::mat a = {{4, 1, 0}, {1, 3, 1}, {0, 1, 2}};
  arma::vec x_true = {1, -2, 3};
  arma::vec b = a * x_true;
  arma::vec x = arma::solve(a, b);
  EXPECT_LT(arma::norm(x - x_true), 1e-12);
  arma::vec s = arma::svd(a);  // LAPACK
  EXPECT_NEAR(arma::accu(arma::square(s)), arma::accu(arma::square(a)), 1e-10);
}

TEST(Eigen, SvdReconstructs) {
  Eigen::MatrixXf m = Eigen::MatrixXf::Random(6, 4);
  Eigen::BDCSVD<Eigen::MatrixXf> svd(m, Eigen::ComputeThinU | Eigen::ComputeThinV);
  Eigen::MatrixXf r = svd.matrixU() * svd.singularValues().asDiagonal() * svd.matrixV().transpose();
  EXPECT_LT((r - m).norm(), 1e-4);
}

TEST(YamlCpp, ParsesWithMarks) {
  YAML::Node n = YAML::Load("a: 1\nb: [2, 3]\n");
  EXPECT_EQ(n["b"][1].as<int>(), 3);
  EXPECT_EQ(n["b"].Mark().line, 1);
}

TEST(Onnx, ProtobufRoundTrip) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.mutable_graph()->set_name("g");
  auto* node = m.mutable_graph()->add_node();
  node->set_op_type("Relu");
  const std::string bytes = m.SerializeAsString();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.graph().node(0).op_type(), "Relu");
}

}  // namespace
