// The MAC units of a dense stage (the RTL twin of sc::MacArray's
// arithmetic): every cycle, each of the P_OUT units multiplies the same
// FINE·P_IN window words by its own FINE·P_IN weights and sums the products
// (multiplies and sums, one register stage). The accumulator behind it adds
// the sums of a block's cycles.
//
// Lanes: x word (n, m) = kernel position n, channel m at lane n·P_IN + m (the
// line buffer's rd_data); weight of unit l for (n, m) at lane
// (l·P_IN + m)·FINE + n (the weight memory image's order, docs/rtl.md).
//
// DSP packing (Xilinx WP486). Units 2k and 2k+1 multiply the same window
// word x by their own weights wa, wb, so one DSP48E2 (mixtd_dsp_mac) forms
// both products at once: (wb·2^18 + wa)·x = wb·x·2^18 + wa·x, the packed
// factor made by the slice's pre-adder. The products of one word lane
// i = n·P_IN + m run down a chain of up to CHAIN slices through the
// post-adders (PCOUT -> PCIN), so a chain ends in
//
//   P = Sb·2^18 + Sa,  Sa = Σ wa·x,  Sb = Σ wb·x  (over the chain's lanes),
//
// and splits exactly as Sa = P[17:0] sign-extended, Sb = P[47:18] + P[17]
// (P − Sa = Sb·2^18; when Sa < 0, P[17] = 1 and P[47:18] = Sb − 1).
//
// Why a chain of 8 stays exact: the split needs Sa inside the low field's
// signed range, |Sa| ≤ 2^17 − 1 = 131,071. Mantissas are symmetric int8,
// −127…127 (SPEC "Numbers"), so |wa·x| ≤ 127·127 = 16,129 and
// |Sa| ≤ 8·16,129 = 129,032 < 131,071. (With −128 the pair alone is still
// exact — |wa·x| ≤ 16,384 — but 8·(−128)·(−128) = 131,072 = 2^17 would not
// be: chains of 8 rely on the symmetric range; test_rtl_dsp checks both.)
// Sb is the upper field of a 48-bit P: |Sb| ≤ 8·16,384 = 2^17, far inside.
// The chains' Sa and Sb are added in fabric into each unit's 32-bit sum.
//
// An odd P_OUT's last unit has no partner: its slices get wb = 0 (one
// multiply per DSP) and its sum is the chains' P (exact without the bound).
//
// DSP48E2 per array: FINE·P_IN·ceil(P_OUT/2) (models/arch dsps_for).
module mixtd_mac_array #(
    parameter int P_IN = 1,
    parameter int P_OUT = 1,
    parameter int FINE = 1
) (
    input  logic                          clk,
    input  logic [FINE*P_IN*8-1:0]        x,
    input  logic [P_OUT*P_IN*FINE*8-1:0]  w,
    output logic [P_OUT*32-1:0]           sum
);
  localparam int K = FINE * P_IN;  // products per unit
  localparam int CHAIN = 8;        // slices per cascade (the bound above)
  localparam int CHAINS = (K + CHAIN - 1) / CHAIN;
  localparam int PAIRS = (P_OUT + 1) / 2;

  for (genvar k = 0; k < PAIRS; k = k + 1) begin : g_pairs
    localparam bit PACKED = 2 * k + 1 < P_OUT;
    // Only a chain's last P and the links' PCOUTs are read.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [47:0] pc[K], pco[K];  // each slice's P and PCOUT (the same value)
    /* verilator lint_on UNUSEDSIGNAL */
    for (genvar i = 0; i < K; i = i + 1) begin : g_slices
      localparam int N = i / P_IN, M = i % P_IN;
      logic [7:0] wb;
      if (PACKED) begin : g_b
        assign wb = w[(((2 * k + 1) * P_IN + M) * FINE + N) * 8+:8];
      end else begin : g_b
        assign wb = 8'd0;
      end
      logic [47:0] pcin;
      if (i % CHAIN == 0) begin : g_head
        assign pcin = 48'd0;
      end else begin : g_link
        assign pcin = pco[i-1];
      end
      mixtd_dsp_mac #(.CASCADE(i % CHAIN != 0)) dsp (
          .wa(w[((2 * k * P_IN + M) * FINE + N) * 8+:8]), .wb, .x(x[i*8+:8]), .pcin, .pcout(pco[i]),
          .p(pc[i])
      );
    end

    logic [47:0] tail[CHAINS];  // each chain's last P
    for (genvar c = 0; c < CHAINS; c = c + 1) begin : g_tails
      assign tail[c] = pc[c*CHAIN+CHAIN-1 < K ? c*CHAIN+CHAIN-1 : K-1];
    end
    logic signed [31:0] sa, sb;
    always_comb begin
      sa = 32'sd0;
      sb = 32'sd0;
      for (int c = 0; c < CHAINS; c = c + 1) begin
        // An unpaired unit's P is Sa itself.
        sa = sa + (PACKED ? 32'($signed(tail[c][17:0])) : 32'(tail[c]));
        sb = sb + 32'($signed(tail[c][47:18])) + 32'(tail[c][17]);
      end
    end
    always_ff @(posedge clk) sum[2*k*32+:32] <= sa;
    if (PACKED) begin : g_sum_b
      always_ff @(posedge clk) sum[(2*k+1)*32+:32] <= sb;
    end
  end
endmodule
