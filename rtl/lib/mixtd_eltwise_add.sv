// Elementwise add (sc::Routing::EltwiseAdd): INPUTS streams of CHANNELS
// channels into one. Input q's mantissas carry exponent EXPS[8q +: 8]
// (signed); each word is aligned to the smallest exponent e_min —
// numerics::align, a left shift by min(e_q − e_min, 31), here a constant
// shift, i.e. wiring — the aligned words are summed and the sum goes
// through one requantiser {BIAS, SHIFT, RELU} (numerics::requantize).
//
// The aligned sum needs up to 7 + 31 + log2(INPUTS) bits, mixtd_requantise
// takes an int32 accumulator. Bit-exact reduction, with A = sum + BIAS (64
// bits): for SHIFT > 23, round_shift(A, SHIFT) = round_shift(A >>> K,
// SHIFT − K) with K = SHIFT − 23 (the rounding constant 2^(SHIFT−1) is a
// multiple of 2^K, so flooring first changes nothing); then clamping to
// ±2^30 changes nothing either, since at a shift of at most 23 anything
// beyond saturates to ±127 both before and after (and stays negative for
// the ReLU).
//
// Timing: as mixtd_group_add — mixtd_stream_route, then two registers (the
// reduced sum, the requantised word).
module mixtd_eltwise_add #(
    parameter int CHANNELS = 8,
    parameter int INPUTS = 2,
    parameter int W_IN = 1,
    parameter int W_OUT = 1,
    parameter logic [8*INPUTS-1:0] EXPS = '0,
    parameter int BIAS = 0,
    parameter int SHIFT = 0,
    parameter int RELU = 0
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [INPUTS-1:0] in_valid,
    output logic [INPUTS-1:0] in_ready,
    input  logic [INPUTS*W_IN*8-1:0] in_data,
    output logic out_valid,
    input  logic out_ready,
    output logic [W_OUT*8-1:0] out_data
);
  function integer exponent;
    input integer q;
    begin
      exponent = {{24{EXPS[8*q+7]}}, EXPS[8*q+:8]};
    end
  endfunction
  function integer min_exponent;
    input integer n;
    integer q;
    begin
      min_exponent = exponent(0);
      for (q = 1; q < n; q = q + 1) if (exponent(q) < min_exponent) min_exponent = exponent(q);
    end
  endfunction
  localparam int E_MIN = min_exponent(INPUTS);
  // The requantiser's shift, clamped to its 7-bit port (no result changes:
  // beyond ±62 / −31 the C++ clamps too), and split as above.
  localparam int SHIFT_C = SHIFT > 63 ? 63 : SHIFT < -64 ? -64 : SHIFT;
  localparam int K = SHIFT_C > 23 ? SHIFT_C - 23 : 0;
  localparam int SHIFT_R = SHIFT_C - K;
  localparam logic [31:0] BIAS_W = BIAS;

  logic words_valid, words_ready;
  logic [INPUTS*W_OUT*8-1:0] words;  // lane q*W_OUT + l: word l of input q
  mixtd_stream_route #(
      .ROUTING(3),
      .CHANNELS(CHANNELS),
      .PORTS_IN(INPUTS),
      .W_IN(W_IN),
      .W_OUT(W_OUT)
  ) route (
      .clk,
      .rst_n,
      .in_valid,
      .in_ready,
      .in_data,
      .out_valid(words_valid),
      .out_ready(words_ready),
      .out_data(words)
  );

  logic sum_valid;
  logic [W_OUT*32-1:0] sum, sum_q;
  logic [W_OUT*8-1:0] q;
  wire out_take = !out_valid || out_ready;
  wire sum_take = !sum_valid || out_take;
  assign words_ready = sum_take;

  always_comb
    for (int l = 0; l < W_OUT; l = l + 1) begin
      logic signed [63:0] a, m;
      a = {{32{BIAS_W[31]}}, BIAS_W};
      for (int p = 0; p < INPUTS; p = p + 1) begin
        m = {{56{words[(p*W_OUT+l)*8+7]}}, words[(p*W_OUT+l)*8+:8]};
        a = a + (m <<< (exponent(p) - E_MIN > 31 ? 31 : exponent(p) - E_MIN));
      end
      a = a >>> K;
      if (a > 64'sd1073741823) sum[l*32+:32] = 32'sd1073741823;
      else if (a < -64'sd1073741824) sum[l*32+:32] = -32'sd1073741824;
      else sum[l*32+:32] = a[31:0];
    end

  for (genvar l = 0; l < W_OUT; l = l + 1) begin : g_lane
    mixtd_requantise requantise (
        .acc(sum_q[l*32+:32]),
        .bias(32'sd0),
        .shift(SHIFT_R[6:0]),
        .relu(RELU != 0),
        .q(q[l*8+:8])
    );
  end

  always_ff @(posedge clk) begin
    if (sum_take) sum_q <= sum;
    if (out_take) out_data <= q;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sum_valid <= 1'b0;
      out_valid <= 1'b0;
    end else begin
      if (sum_take) sum_valid <= words_valid;
      if (out_take) out_valid <= sum_valid;
    end
  end
endmodule
