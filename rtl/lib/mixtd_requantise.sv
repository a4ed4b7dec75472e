// One word through the requantiser at the end of every stage, exactly
// numerics::requantize (models/numerics/include/mixtd/numerics/Bfp8.h):
//
//   v = acc + bias                      (64 bits: cannot overflow)
//   v = shift > 0 ? (v + 2^(shift-1)) >>> shift     round half up
//                 : v << min(-shift, 31)
//   v = relu && v < 0 ? 0 : v
//   q = clamp(v, -127, 127)             the symmetric int8 mantissa
//
// Combinational; the stage registers around it. SHIFT_BITS = 6 covers the
// legal shifts -31..31 (numerics::kMaxShift); larger magnitudes saturate
// to ±62 / 31 as in the C++.
module mixtd_requantise (
    input  logic signed [31:0] acc,
    input  logic signed [31:0] bias,
    input  logic signed [6:0]  shift,
    input  logic               relu,
    output logic signed [7:0]  q
);
  logic signed [63:0] sum, shifted, rectified;
  logic [5:0] right, left;
  logic signed [7:0] neg;

  always_comb begin
    sum = {{32{acc[31]}}, acc} + {{32{bias[31]}}, bias};
    right = shift > 7'sd62 ? 6'd62 : shift[5:0];
    neg = -{shift[6], shift};  // 8 bits: -(-64) must not wrap
    left = neg > 8'sd31 ? 6'd31 : neg[5:0];
    if (shift > 0) shifted = (sum + (64'sd1 <<< (right - 6'd1))) >>> right;
    else shifted = sum <<< left;
    rectified = relu && shifted < 0 ? 64'sd0 : shifted;
    if (rectified > 64'sd127) q = 8'sd127;
    else if (rectified < -64'sd127) q = -8'sd127;
    else q = rectified[7:0];
  end
endmodule
