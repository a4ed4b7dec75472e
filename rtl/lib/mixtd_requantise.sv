// One word through the requantiser at the end of every stage, exactly
// numerics::requantize (models/numerics/include/mixtd/numerics/Bfp8.h):
//
//   v = acc + bias                      (64 bits in the C++)
//   v = shift > 0 ? (v + 2^(shift-1)) >>> shift     round half up
//                 : v << min(-shift, 31)
//   v = relu && v < 0 ? 0 : v
//   q = clamp(v, -127, 127)             the symmetric int8 mantissa
//
// The same in 34 bits, because the result saturates to 8 (a 64-bit barrel
// shifter was 1,270 LUTs of the stage's requantiser lanes, docs/rtl-resources.md):
//
//  * acc + bias needs 33 bits (|v| ≤ 2^32);
//  * a right shift s ≥ 33 rounds every such v to 0 (v + 2^(s-1) lies in
//    [0, 2^s)); for 1 ≤ s ≤ 32 the rounded sum fits in 34 bits;
//  * a left shift l saturates exactly when |v| > 127 >> l (127 is odd, so
//    v·2^l < −127 ⇔ v < −(127 >> l) for every l); otherwise v fits in 8 bits
//    and the result is v[7:0] << l;
//  * relu and the symmetric clamp commute (max(clamp(v), 0)).
//
// Combinational; the stage registers around it. The shift field is 7-bit
// signed (−64..63); magnitudes beyond numerics::kMaxShift behave as the C++.
module mixtd_requantise (
    input  logic signed [31:0] acc,
    input  logic signed [31:0] bias,
    input  logic signed [6:0]  shift,
    input  logic               relu,
    output logic signed [7:0]  q
);
  logic signed [32:0] sum;
  logic signed [33:0] rounded, shifted;
  logic signed [32:0] limit;
  logic signed [7:0] neg, clamped;
  logic [4:0] left;

  always_comb begin
    sum = {acc[31], acc} + {bias[31], bias};
    rounded = '0;
    shifted = '0;
    limit = '0;
    neg = -{shift[6], shift};  // 8 bits: -(-64) must not wrap
    left = neg > 8'sd31 ? 5'd31 : neg[4:0];
    if (shift > 7'sd32) begin
      clamped = 8'sd0;
    end else if (shift > 7'sd0) begin
      rounded = {sum[32], sum} + (34'sd1 <<< (shift[5:0] - 6'd1));
      shifted = rounded >>> shift[5:0];
      if (shifted > 34'sd127) clamped = 8'sd127;
      else if (shifted < -34'sd127) clamped = -8'sd127;
      else clamped = shifted[7:0];
    end else begin
      limit = {26'd0, 7'd127 >> left};
      if (sum > limit) clamped = 8'sd127;
      else if (sum < -limit) clamped = -8'sd127;
      else clamped = sum[7:0] << left;
    end
    q = relu && clamped < 0 ? 8'sd0 : clamped;
  end
endmodule
