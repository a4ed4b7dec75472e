// Group add (sc::Routing::GroupAdd): the PARTIALS (g2) partial streams of
// one output group of a grouped layer into one — word i of the output is
// numerics::requantize(Σ_q word i of partial q, requant[i]), the sum in
// int32 (it cannot overflow: |word| ≤ 127).
//
// requant[i], per output word of a pixel (channel a + i·g1 of output group
// a), is a ROM initialised from the memory image REQUANT_FILE ($readmemh):
// CHANNELS lines of 40-bit hex words {relu, shift[6:0], bias[31:0]}, or,
// REQUANT_ID ≠ 0, written over the weight-load bus in the same layout
// (mixtd_load_port; docs/rtl.md "Weight load").
//
// Timing: mixtd_stream_route (two-pixel buffer, a beat one cycle after the
// words it needs) followed by the requantiser pipeline, kRequantPipeline = 2
// registers: the sum, then the requantised word, which is out_data. An
// output beat so leaves 1 + 2 cycles after its last input word, as in
// SystemC. Each register takes a beat when it is empty or passes its own
// on in the same cycle, so a stalled output loses no cycle to bubbles.
module mixtd_group_add #(
    parameter int CHANNELS = 8,
    parameter int PARTIALS = 2,
    parameter int W_IN = 1,
    parameter int W_OUT = 1,
    parameter REQUANT_FILE = "group_add.mem",
    parameter int REQUANT_ID = 0
) (
    input  logic clk,
    input  logic rst_n,
    input  logic [PARTIALS-1:0] in_valid,
    output logic [PARTIALS-1:0] in_ready,
    input  logic [PARTIALS*W_IN*8-1:0] in_data,
    output logic out_valid,
    input  logic out_ready,
    output logic [W_OUT*8-1:0] out_data,
    input  logic [81:0] load
);
  localparam int BEATS_OUT = CHANNELS / W_OUT;
  localparam int BO = BEATS_OUT > 1 ? $clog2(BEATS_OUT) : 1;

  logic words_valid, words_ready;
  logic [PARTIALS*W_OUT*8-1:0] words;  // lane q*W_OUT + l: word l of partial q
  mixtd_stream_route #(
      .ROUTING(3),
      .CHANNELS(CHANNELS),
      .PORTS_IN(PARTIALS),
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

  logic [39:0] requant[CHANNELS];
  initial if (REQUANT_FILE != "") $readmemh(REQUANT_FILE, requant);
  if (REQUANT_ID != 0) begin : g_requant_load
    localparam int AW = CHANNELS > 1 ? $clog2(CHANNELS) : 1;
    logic we;
    logic [AW-1:0] wa;
    logic [39:0] wd;
    mixtd_load_port #(.ID(REQUANT_ID), .WIDTH(40), .DEPTH(CHANNELS)) port (
        .clk, .rst_n, .load, .we, .waddr(wa), .wdata(wd)
    );
    always_ff @(posedge clk) if (we) requant[wa] <= wd;
  end else begin : g_rom
    // verilator lint_off UNUSEDSIGNAL
    wire unused = |load;
    // verilator lint_on UNUSEDSIGNAL
  end

  logic sum_valid;
  logic [BO-1:0] beat, sum_beat;  // beat of the pixel entering / in the sum register
  logic [W_OUT*32-1:0] sum, sum_q;
  logic [W_OUT*8-1:0] q;
  wire out_take = !out_valid || out_ready;
  wire sum_take = !sum_valid || out_take;
  assign words_ready = sum_take;

  always_comb
    for (int l = 0; l < W_OUT; l = l + 1) begin
      logic [31:0] s;
      s = 32'd0;
      for (int p = 0; p < PARTIALS; p = p + 1)
        s = s + {{24{words[(p*W_OUT+l)*8+7]}}, words[(p*W_OUT+l)*8+:8]};
      sum[l*32+:32] = s;
    end

  // a·K for a constant K as shifts and adds (yosys would spend a DSP48E2 on
  // a $mul by a constant that is not a power of two).
  function automatic logic [31:0] times_const(input logic [31:0] a, input int k);
    times_const = 32'd0;
    for (int i = 0; i < 31; i = i + 1)
      if (k[i]) times_const = times_const + (a << i);
  endfunction

  for (genvar l = 0; l < W_OUT; l = l + 1) begin : g_lane
    wire [39:0] r = requant[times_const(32'(sum_beat), W_OUT)+l];
    mixtd_requantise requantise (
        .acc(sum_q[l*32+:32]),
        .bias(r[31:0]),
        .shift(r[38:32]),
        .relu(r[39]),
        .q(q[l*8+:8])
    );
  end

  always_ff @(posedge clk) begin
    if (sum_take) begin
      sum_q <= sum;
      sum_beat <= beat;
    end
    if (out_take) out_data <= q;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      beat <= '0;
      sum_valid <= 1'b0;
      out_valid <= 1'b0;
    end else begin
      if (words_valid && words_ready) beat <= beat == BO'(BEATS_OUT - 1) ? '0 : beat + 1'b1;
      if (sum_take) sum_valid <= words_valid;
      if (out_take) out_valid <= sum_valid;
    end
  end
endmodule
