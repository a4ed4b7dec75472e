// The accumulators behind a stage's MAC units: LANES int32 sums, cleared at
// the first cycle of an output block and handed on (res_valid for one
// cycle) with its last. int32 cannot overflow: |x|, |w| <= 127 and a block
// sums at most C·kh·kw <= 2^17 products (SPEC "Numbers").
module mixtd_accumulator #(
    parameter int LANES = 1
) (
    input  logic                  clk,
    input  logic                  rst_n,
    input  logic                  in_valid,
    input  logic                  first,
    input  logic                  last,
    input  logic [LANES*32-1:0]   in_sum,
    output logic                  res_valid,
    output logic [LANES*32-1:0]   res
);
  logic [LANES*32-1:0] acc;
  for (genvar l = 0; l < LANES; l = l + 1) begin : g_lanes
    wire [31:0] total = (first ? 32'd0 : acc[l*32+:32]) + in_sum[l*32+:32];
    always_ff @(posedge clk)
      if (in_valid) begin
        acc[l*32+:32] <= total;
        if (last) res[l*32+:32] <= total;
      end
  end
  always_ff @(posedge clk)
    if (!rst_n) res_valid <= 1'b0;
    else res_valid <= in_valid && last;
endmodule
