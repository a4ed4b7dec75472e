// The MAC units of a dense stage (the RTL twin of sc::MacArray's
// arithmetic): every cycle, each of the P_OUT units multiplies the same
// FINE·P_IN window words by its own FINE·P_IN weights and sums the products
// (multiply and adder tree, one register stage). The accumulator behind it
// adds the sums of a block's cycles.
//
// Lanes: x word (n, m) = kernel position n, channel m at lane n·P_IN + m (the
// line buffer's rd_data); weight of unit l for (n, m) at lane
// (l·P_IN + m)·FINE + n (the weight memory image's order, docs/rtl.md).
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
  for (genvar l = 0; l < P_OUT; l = l + 1) begin : g_units
    logic signed [31:0] s;
    always_comb begin
      s = 32'sd0;
      for (int m = 0; m < P_IN; m = m + 1)
        for (int n = 0; n < FINE; n = n + 1)
          s = s + 32'($signed(x[(n*P_IN+m)*8+:8])) * 32'($signed(w[((l*P_IN+m)*FINE+n)*8+:8]));
    end
    always_ff @(posedge clk) sum[l*32+:32] <= s;
  end
endmodule
