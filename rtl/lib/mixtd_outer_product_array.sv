// The MAC units of a depthwise stage (the RTL twin of
// sc::OuterProductArray's arithmetic): the P_IN channels of the window are
// scattered over P_IN units; unit m multiplies channel m at FINE kernel
// positions by that channel's FINE weights and sums them (one register
// stage, as mixtd_mac_array).
//
// Lanes: x word (n, m) at n·P_IN + m (the line buffer's rd_data); the weight
// of channel m at position n at lane m·FINE + n.
module mixtd_outer_product_array #(
    parameter int P_IN = 1,
    parameter int FINE = 1
) (
    input  logic                   clk,
    input  logic [FINE*P_IN*8-1:0] x,
    input  logic [P_IN*FINE*8-1:0] w,
    output logic [P_IN*32-1:0]     sum
);
  for (genvar m = 0; m < P_IN; m = m + 1) begin : g_units
    logic signed [31:0] s;
    always_comb begin
      s = 32'sd0;
      for (int n = 0; n < FINE; n = n + 1)
        s = s + 32'($signed(x[(n*P_IN+m)*8+:8])) * 32'($signed(w[(m*FINE+n)*8+:8]));
    end
    always_ff @(posedge clk) sum[m*32+:32] <= s;
  end
endmodule
