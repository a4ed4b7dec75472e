#include "mixtd/numerics/Golden.h"

#include <algorithm>

#include "mixtd/support/Error.h"

namespace mixtd::numerics::golden {

Int8Tensor run_stage(const Int8Tensor& x, const QStage& st) {
  const auto& s = st.shape;
  require(x.c == s.in_ch && x.h == s.in.h && x.w == s.in.w,
          "golden: stage " + s.role + " expects input " + s.in.str() + ", got " + x.shape().str());
  Int8Tensor y(x.n, s.out);
  const std::int64_t cin = s.in_per_group(), out_per_group = s.out_ch / s.groups;
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t o = 0; o < s.out_ch; ++o)
      for (std::int64_t i = 0; i < s.out.h; ++i)
        for (std::int64_t j = 0; j < s.out.w; ++j) {
          std::int64_t acc = 0;
          for (std::int64_t c = 0; c < cin; ++c) {
            const std::int64_t ic = (o / out_per_group) * cin + c;
            for (std::int64_t u = 0; u < s.kh; ++u)
              for (std::int64_t v = 0; v < s.kw; ++v) {
                const std::int64_t r = i * s.sh + u - s.ph, q = j * s.sw + v - s.pw;
                if (r < 0 || r >= x.h || q < 0 || q >= x.w) continue;  // zero padding
                acc += std::int64_t{st.weight[static_cast<std::size_t>(((o * cin + c) * s.kh + u) * s.kw + v)]} *
                       x.at(n, ic, r, q);
              }
          }
          y.at(n, o, i, j) = requantize(acc, st.requant[static_cast<std::size_t>(o)]);
        }
  return y;
}

Int8Tensor run_engine(const Int8Tensor& x, const std::vector<QStage>& stages) {
  Int8Tensor t = x;
  for (const auto& s : stages) t = run_stage(t, s);
  return t;
}

namespace {

Int8Tensor run_conv(const QLayer& l, const Int8Tensor& x_in) {
  Int8Tensor x = x_in;
  if (l.kind == QKind::Linear) {  // a 1x1 stage over the flattened input
    x.c = x.per_image();
    x.h = x.w = 1;
  }
  const std::int64_t g1 = l.tau.g1, g2 = l.tau.g2;
  Int8Tensor y(x.n, l.out_shape);
  if (g2 == 1) {
    for (std::int64_t a = 0; a < g1; ++a) {
      const Int8Tensor t = run_engine(x, l.chunks[static_cast<std::size_t>(a)]);
      for (std::int64_t n = 0; n < x.n; ++n)
        for (std::int64_t j = 0; j < t.c; ++j)
          for (std::int64_t p = 0; p < t.h * t.w; ++p)
            y.data[y.index(n, a + j * g1, 0, 0) + static_cast<std::size_t>(p)] =
                t.data[t.index(n, j, 0, 0) + static_cast<std::size_t>(p)];
    }
    return y;
  }
  // g2 > 1: sum the partials of output channel a + j*g1 over the input groups, then requantise.
  std::vector<std::int64_t> acc(y.data.size(), 0);
  for (std::int64_t b = 0; b < g2; ++b) {
    const Int8Tensor xb = channel_group(x, g2, b);
    for (std::int64_t a = 0; a < g1; ++a) {
      const Int8Tensor t = run_engine(xb, l.chunks[static_cast<std::size_t>(a * g2 + b)]);
      for (std::int64_t n = 0; n < x.n; ++n)
        for (std::int64_t j = 0; j < t.c; ++j)
          for (std::int64_t p = 0; p < t.h * t.w; ++p)
            acc[y.index(n, a + j * g1, 0, 0) + static_cast<std::size_t>(p)] +=
                t.data[t.index(n, j, 0, 0) + static_cast<std::size_t>(p)];
    }
  }
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t c = 0; c < y.c; ++c)
      for (std::int64_t p = 0; p < y.h * y.w; ++p) {
        const std::size_t e = y.index(n, c, 0, 0) + static_cast<std::size_t>(p);
        y.data[e] = requantize(acc[e], l.group_add[static_cast<std::size_t>(c)]);
      }
  return y;
}

Int8Tensor run_pool(const QLayer& l, const Int8Tensor& x) {
  const auto& p = l.pool;
  Int8Tensor y(x.n, l.out_shape);
  const bool is_max = l.kind == QKind::MaxPool;
  for (std::int64_t n = 0; n < x.n; ++n)
    for (std::int64_t c = 0; c < x.c; ++c)
      for (std::int64_t i = 0; i < y.h; ++i)
        for (std::int64_t j = 0; j < y.w; ++j) {
          std::int64_t best = kMantissaMin, sum = 0, count = 0;
          for (std::int64_t u = 0; u < p.kh; ++u)
            for (std::int64_t v = 0; v < p.kw; ++v) {
              const std::int64_t r = i * p.sh + u - p.ph, q = j * p.sw + v - p.pw;
              if (r >= 0 && r < x.h && q >= 0 && q < x.w) {
                best = std::max<std::int64_t>(best, x.at(n, c, r, q));
                sum += x.at(n, c, r, q);
                ++count;
              } else if (p.count_include_pad) {
                ++count;  // a padded zero (max pooling ignores padding)
              }
            }
          y.at(n, c, i, j) = is_max ? static_cast<std::int8_t>(best) : average(sum, count);
        }
  return y;
}

}  // namespace

Int8Tensor run_layer(const QLayer& l, const std::vector<const Int8Tensor*>& in) {
  const Int8Tensor& x = *in.at(0);
  switch (l.kind) {
    case QKind::Conv:
    case QKind::Linear:
      return run_conv(l, x);
    case QKind::MaxPool:
    case QKind::AvgPool:
      return run_pool(l, x);
    case QKind::GlobalAvgPool: {
      Int8Tensor y(x.n, l.out_shape);
      for (std::int64_t n = 0; n < x.n; ++n)
        for (std::int64_t c = 0; c < x.c; ++c) {
          std::int64_t sum = 0;
          for (std::int64_t p = 0; p < x.h * x.w; ++p) sum += x.data[x.index(n, c, 0, 0) + static_cast<std::size_t>(p)];
          y.at(n, c, 0, 0) = average(sum, x.h * x.w);
        }
      return y;
    }
    case QKind::Add: {
      const int e_min = *std::min_element(l.in_exps.begin(), l.in_exps.end());
      Int8Tensor y(x.n, l.out_shape);
      for (std::size_t e = 0; e < y.data.size(); ++e) {
        std::int64_t s = 0;
        for (std::size_t k = 0; k < in.size(); ++k) s += align(in[k]->data[e], l.in_exps[k], e_min);
        y.data[e] = requantize(s, l.add_requant);
      }
      return y;
    }
    case QKind::ReLU: {
      Int8Tensor y = x;
      for (auto& v : y.data) v = std::max<std::int8_t>(v, 0);
      return y;
    }
    case QKind::Flatten: {
      Int8Tensor y = x;
      y.c = x.per_image();
      y.h = y.w = 1;
      return y;
    }
    case QKind::Identity:
      return x;
  }
  return x;
}

Int8Tensor run_network(const QNetwork& q, const Int8Tensor& input, std::map<std::string, Int8Tensor>* all) {
  require(input.shape() == q.input_shape,
          "golden: network '" + q.name + "' expects " + q.input_shape.str() + ", got " + input.shape().str());
  std::map<std::string, Int8Tensor> values;
  values[q.input_name] = input;
  for (const auto& l : q.layers) {
    std::vector<const Int8Tensor*> ins;
    for (const auto& i : l.inputs) ins.push_back(&values.at(i));
    values[l.name] = run_layer(l, ins);
  }
  Int8Tensor out = values.at(q.output);
  if (all) *all = std::move(values);
  return out;
}

}  // namespace mixtd::numerics::golden
