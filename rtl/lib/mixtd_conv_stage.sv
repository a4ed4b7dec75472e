// A conv stage (SPEC "Stage"): line buffer → MAC units → accumulator →
// requantiser → output FIFO. The RTL twin of sc::Stage (models/sc/src/
// Stage.cpp), with its timing rules (arch::stage_cycles):
//
//  * windows in raster order; per window BLOCKS output blocks (P_OUT
//    channels dense, P_IN depthwise), each COST cycles: (C/(GROUPS·P_IN))·
//    (kh·kw/FINE) dense, kh·kw/FINE depthwise, issued back to back;
//  * grouped (1 < GROUPS, dense): one engine for all groups; the
//    (N/GROUPS)/P_OUT blocks of group g (output channels g·N/GROUPS …) come
//    one after the other in output-channel order and read only the
//    C/GROUPS input channels of g (line buffer chunks g·CCH … g·CCH+CCH−1),
//    as sc::MacArray;
//  * a block's beat is offered kMacPipeline + kRequantPipeline = 5 cycles
//    after the block's last cycle (read, multiply-and-tree, accumulate;
//    requantise, output register);
//  * the window is released with its last read.
//
// Back-pressure: the pipeline behind the issue stage does not stall, so a
// block starts only with a credit for its result in the output FIFO
// (CREDITS: enough for a stall-free stream plus two results, the two the
// SystemC accumulator holds). docs/rtl.md says how this differs from
// SystemC's look-ahead under back-pressure.
//
// Memory images (docs/rtl.md): WEIGHT_FILE, one word per (block, channel
// chunk, kernel chunk) in that order, lane (l·P_IN + m)·FINE + n = weight of
// output channel block·P_OUT + l, input channel chunk·P_IN + m of the
// block's group (of C/GROUPS), kernel position chunk·FINE + n (depthwise: one word per (block, kernel chunk),
// lane m·FINE + n); REQUANT_FILE, one word per block, lane l (40 bits) =
// {relu, shift[6:0], bias[31:0]} of the block's output channel l.
//
// Weight load (docs/rtl.md): WEIGHT_ID / REQUANT_ID ≠ 0 give the memories a
// write port on the load bus (mixtd_load_port), images in the same layout,
// so a kernel loads them after reset (UltraRAM has no bitstream contents);
// 0 keeps them ROMs of the files above.
module mixtd_conv_stage #(
    parameter int C = 8,
    parameter int H = 8,
    parameter int W = 8,
    parameter int N = 8,
    parameter int KH = 3,
    parameter int KW = 3,
    parameter int SH = 1,
    parameter int SW = 1,
    parameter int PH = 1,
    parameter int PW = 1,
    parameter int P_IN = 1,
    parameter int P_OUT = 1,
    parameter int FINE = 1,
    parameter int DEPTHWISE = 0,  // 1: depthwise (outer products)
    parameter int GROUPS = 1,     // dense: conv groups (P_IN | C/GROUPS, P_OUT | N/GROUPS)
    parameter int CAP = 32,
    parameter WEIGHT_FILE = "",
    parameter REQUANT_FILE = "",
    parameter int WEIGHT_ID = 0,
    parameter int REQUANT_ID = 0,
    // Derived (do not set).
    parameter int OUT_P = DEPTHWISE != 0 ? P_IN : P_OUT
) (
    input  logic                clk,
    input  logic                rst_n,
    input  logic                in_valid,
    output logic                in_ready,
    input  logic [P_IN*8-1:0]   in_data,
    output logic                out_valid,
    input  logic                out_ready,
    output logic [OUT_P*8-1:0]  out_data,
    input  logic [81:0]         load
);
  localparam bit DW = DEPTHWISE != 0;
  localparam int KK = KH * KW;
  localparam int KCH = KK / FINE;
  localparam int G = DW ? 1 : GROUPS;  // depthwise: GROUPS is not used
  localparam int LCH = C / P_IN;       // the line buffer's channel chunks
  localparam int CCH = C / (G * P_IN);  // channel chunks a block reads
  localparam int BLOCKS = DW ? C / P_IN : N / P_OUT;
  localparam int COST = DW ? KCH : CCH * KCH;
  localparam int PIPE = 5;  // arch::kMacPipeline + arch::kRequantPipeline
  localparam int CREDITS = 3 + PIPE / COST;
  localparam int WLANES = DW ? P_IN * FINE : P_OUT * P_IN * FINE;
  localparam int WWORDS = DW ? BLOCKS * KCH : BLOCKS * CCH * KCH;
  localparam int CCW = CCH > 1 ? $clog2(CCH) : 1;
  localparam int KCW = KCH > 1 ? $clog2(KCH) : 1;
  localparam int BW = BLOCKS > 1 ? $clog2(BLOCKS) : 1;
  localparam int LCW = LCH > 1 ? $clog2(LCH) : 1;
  localparam int WAW = WWORDS > 1 ? $clog2(WWORDS) : 1;
  localparam int CRW = $clog2(CREDITS + 1);

  // ---- memories -----------------------------------------------------------
  logic [WLANES*8-1:0] weights[WWORDS];
  logic [OUT_P*40-1:0] requant[1<<BW];
  initial begin
    if (WEIGHT_FILE != "") $readmemh(WEIGHT_FILE, weights);
    if (REQUANT_FILE != "") $readmemh(REQUANT_FILE, requant, 0, BLOCKS - 1);
  end
  if (WEIGHT_ID != 0) begin : g_weight_load
    logic we;
    logic [WAW-1:0] wa;
    logic [WLANES*8-1:0] wd;
    mixtd_load_port #(.ID(WEIGHT_ID), .WIDTH(WLANES * 8), .DEPTH(WWORDS)) port (
        .clk, .rst_n, .load, .we, .waddr(wa), .wdata(wd)
    );
    always_ff @(posedge clk) if (we) weights[wa] <= wd;
  end
  if (REQUANT_ID != 0) begin : g_requant_load
    logic we;
    logic [BW-1:0] wa;
    logic [OUT_P*40-1:0] wd;
    mixtd_load_port #(.ID(REQUANT_ID), .WIDTH(OUT_P * 40), .DEPTH(1 << BW)) port (
        .clk, .rst_n, .load, .we, .waddr(wa), .wdata(wd)
    );
    always_ff @(posedge clk) if (we) requant[wa] <= wd;
  end

  // ---- issue: one (block, channel chunk, kernel chunk) step per cycle ------
  logic [BW-1:0] blk;
  logic [CCW-1:0] cc;
  logic [KCW-1:0] kc;
  logic [CRW-1:0] outstanding;  // blocks started, beats not yet taken
  logic win_valid;
  wire step0 = (DW || cc == '0) && kc == '0;
  wire last_step = (DW || cc == CCW'(CCH - 1)) && kc == KCW'(KCH - 1);
  wire credit = outstanding < CRW'(CREDITS);
  wire issue = !step0 || credit && (blk != '0 || win_valid);
  wire last_block = blk == BW'(BLOCKS - 1);
  wire release_window = issue && last_step && last_block;
  logic [LCW-1:0] rd_cc;
  if (G > 1) begin : g_groups
    // The block's group, as the line buffer chunk its input channels start
    // at (gbase = group·CCH), and the block's index within its group.
    localparam int BPG = BLOCKS / G;
    localparam int BGW = BPG > 1 ? $clog2(BPG) : 1;
    logic [BGW-1:0] bg;
    logic [LCW-1:0] gbase;
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        bg <= '0;
        gbase <= '0;
      end else if (issue && last_step) begin
        bg <= bg == BGW'(BPG - 1) ? '0 : bg + 1'b1;
        gbase <= last_block ? '0 : bg == BGW'(BPG - 1) ? gbase + LCW'(CCH) : gbase;
      end
    end
    assign rd_cc = gbase + LCW'(cc);
  end else begin : g_dense
    assign rd_cc = DW ? LCW'(blk) : LCW'(cc);
  end
  wire out_pop = out_valid && out_ready;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      blk <= '0;
      cc <= '0;
      kc <= '0;
      outstanding <= '0;
    end else begin
      if (issue) begin
        kc <= kc == KCW'(KCH - 1) ? '0 : kc + 1'b1;
        if (!DW && kc == KCW'(KCH - 1)) cc <= cc == CCW'(CCH - 1) ? '0 : cc + 1'b1;
        if (last_step) blk <= last_block ? '0 : blk + 1'b1;
      end
      outstanding <= outstanding + CRW'(issue && step0) - CRW'(out_pop);
    end
  end

  logic [FINE*P_IN*8-1:0] x;
  logic [FINE-1:0] pad;  // padding reads zero, which is all a MAC needs
  mixtd_line_buffer #(
      .C(C), .H(H), .W(W), .KH(KH), .KW(KW), .SH(SH), .SW(SW), .PH(PH), .PW(PW),
      .P_IN(P_IN), .FINE(FINE), .CAP(CAP)
  ) line_buffer (
      .clk, .rst_n, .in_valid, .in_ready, .in_data,
      .win_valid, .rd_en(issue), .rd_cc, .rd_kc(kc), .rd_data(x), .rd_pad(pad),
      .win_release(release_window)
  );

  // ---- pipeline: read (1), multiply + tree (2), accumulate (3) -------------
  // a·K for a constant K as shifts and adds. yosys maps a $mul by a constant
  // that is not a power of two to a DSP48E2; index arithmetic in fabric
  // keeps a stage's DSPs its MAC array's (models/arch dsps_for).
  function automatic logic [31:0] times_const(input logic [31:0] a, input int k);
    times_const = 32'd0;
    for (int i = 0; i < 31; i = i + 1)
      if (k[i]) times_const = times_const + (a << i);
  endfunction

  wire [WAW-1:0] waddr = DW ? WAW'(times_const(32'(blk), KCH) + 32'(kc))
                           : WAW'(times_const(times_const(32'(blk), CCH) + 32'(cc), KCH) + 32'(kc));
  logic [WLANES*8-1:0] w1;
  logic v1, first1, last1, v2, first2, last2;
  logic [BW-1:0] b1, b2, b3;
  always_ff @(posedge clk) begin
    if (issue) w1 <= weights[waddr];
    if (!rst_n) {v1, v2} <= '0;
    else {v1, v2} <= {issue, v1};
    {first1, last1, b1} <= {step0, last_step, blk};
    {first2, last2, b2} <= {first1, last1, b1};
  end

  logic [OUT_P*32-1:0] sum2, acc3;
  logic v3;
  if (DW) begin : g_outer
    mixtd_outer_product_array #(.P_IN(P_IN), .FINE(FINE)) outer_product_array (.clk, .x, .w(w1), .sum(sum2));
  end else begin : g_mac
    mixtd_mac_array #(.P_IN(P_IN), .P_OUT(P_OUT), .FINE(FINE)) mac_array (.clk, .x, .w(w1), .sum(sum2));
  end
  mixtd_accumulator #(.LANES(OUT_P)) accumulator (
      .clk, .rst_n, .in_valid(v2), .first(first2), .last(last2), .in_sum(sum2), .res_valid(v3), .res(acc3)
  );
  always_ff @(posedge clk) if (v2 && last2) b3 <= b2;

  // ---- requantise (4), two output registers (5, 6), FIFO -------------------
  logic [OUT_P*8-1:0] q3, q4, q5, q6;
  logic v4, v5, v6;
  for (genvar l = 0; l < OUT_P; l = l + 1) begin : g_requant
    wire [39:0] rq = requant[b3][l*40+:40];
    mixtd_requantise requantise (
        .acc(acc3[l*32+:32]), .bias(rq[31:0]), .shift(rq[38:32]), .relu(rq[39]), .q(q3[l*8+:8])
    );
  end
  always_ff @(posedge clk) begin
    if (!rst_n) {v4, v5, v6} <= '0;
    else {v4, v5, v6} <= {v3, v4, v5};
    {q4, q5, q6} <= {q3, q4, q5};
  end

  logic fifo_ready;
  mixtd_stream_fifo #(.WIDTH(OUT_P * 8), .DEPTH(CREDITS)) out_fifo (
      .clk, .rst_n, .in_valid(v6), .in_ready(fifo_ready), .in_data(q6),
      .out_valid, .out_ready, .out_data
  );
  // verilator lint_off UNUSEDSIGNAL
  wire unused = fifo_ready || |pad || (WEIGHT_ID == 0 && REQUANT_ID == 0 && |load);  // credits keep the FIFO from overflowing
  // verilator lint_on UNUSEDSIGNAL
endmodule
