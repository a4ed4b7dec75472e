// The MAC units of a depthwise stage (the RTL twin of
// sc::OuterProductArray's arithmetic): the P_IN channels of the window are
// scattered over P_IN units; unit m multiplies channel m at FINE kernel
// positions by that channel's FINE weights and sums them (one register
// stage, as mixtd_mac_array).
//
// Lanes: x word (n, m) at n·P_IN + m (the line buffer's rd_data); the weight
// of channel m at position n at lane m·FINE + n.
//
// No DSP packing here: every product has its own x and its own weight, so
// there is no shared operand for two products to ride one DSP48E2 (WP486
// needs one). One slice per multiply (mixtd_dsp_mac with wb = 0), the FINE
// products of a unit summed down cascades of up to 8 slices through the
// post-adders; the chains' sums (exact 48-bit P, 16-bit products) are added
// in fabric. DSP48E2 per array: P_IN·FINE (models/arch dsps_for).
module mixtd_outer_product_array #(
    parameter int P_IN = 1,
    parameter int FINE = 1
) (
    input  logic                   clk,
    input  logic [FINE*P_IN*8-1:0] x,
    input  logic [P_IN*FINE*8-1:0] w,
    output logic [P_IN*32-1:0]     sum
);
  localparam int CHAIN = 8;  // slices per cascade, as mixtd_mac_array
  localparam int CHAINS = (FINE + CHAIN - 1) / CHAIN;
  for (genvar m = 0; m < P_IN; m = m + 1) begin : g_units
    // Only a chain's last P and the links' PCOUTs are read.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [47:0] pc[FINE], pco[FINE];  // each slice's P and PCOUT
    /* verilator lint_on UNUSEDSIGNAL */
    for (genvar n = 0; n < FINE; n = n + 1) begin : g_slices
      logic [47:0] pcin;
      if (n % CHAIN == 0) begin : g_head
        assign pcin = 48'd0;
      end else begin : g_link
        assign pcin = pco[n-1];
      end
      mixtd_dsp_mac #(.CASCADE(n % CHAIN != 0)) dsp (
          .wa(w[(m*FINE+n)*8+:8]), .wb(8'd0), .x(x[(n*P_IN+m)*8+:8]), .pcin, .pcout(pco[n]), .p(pc[n])
      );
    end
    logic signed [31:0] s;
    always_comb begin
      s = 32'sd0;
      for (int c = 0; c < CHAINS; c = c + 1)
        s = s + 32'(pc[c*CHAIN+CHAIN-1 < FINE ? c*CHAIN+CHAIN-1 : FINE-1]);
    end
    always_ff @(posedge clk) sum[m*32+:32] <= s;
  end
endmodule
