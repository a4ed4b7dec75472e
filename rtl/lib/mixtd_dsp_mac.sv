// One DSP48E2 slice of a MAC chain, combinational (no internal registers):
//
//   p = (CASCADE ? pcin : 0) + (wb·2^18 + wa) · x
//
// with wa, wb, x signed 8-bit. The packed factor wb·2^18 + wa is the slice's
// pre-adder (A = wb·2^18 on the A port, D = wa), the multiply is 27 × 18
// bits, and the sum with pcin is the post-adder fed by the previous slice's
// PCOUT (the dedicated cascade: no fabric between the slices of a chain).
// A slice with wb = 0 is an ordinary multiply-add (one product per DSP).
//
// yosys 0.23 infers none of this for UltraScale+ (its xilinx_dsp pass packs
// pre-adders, post-adders and cascades into DSP48E1 cells only, so for
// -family xcup every $add stays in fabric), and so synthesis
// (`ifdef SYNTHESIS`: yosys defines it) instantiates the primitive; Verilator
// runs the behavioural line, which test_rtl_dsp checks against yosys's own
// DSP48E2 simulation model (cells_sim.v) for every int8 pair.
module mixtd_dsp_mac #(
    parameter bit CASCADE = 1'b0  // add pcin (the previous slice's pcout)
) (
    input  logic signed [7:0]  wa,
    input  logic signed [7:0]  wb,
    input  logic signed [7:0]  x,
    input  logic        [47:0] pcin,
    output logic        [47:0] pcout,
    output logic        [47:0] p
);
`ifdef SYNTHESIS
  DSP48E2 #(
      .AMULTSEL("AD"), .A_INPUT("DIRECT"), .BMULTSEL("B"), .B_INPUT("DIRECT"), .PREADDINSEL("A"),
      .USE_MULT("MULTIPLY"), .USE_SIMD("ONE48"),
      .ACASCREG(0), .ADREG(0), .ALUMODEREG(0), .AREG(0), .BCASCREG(0), .BREG(0), .CARRYINREG(0),
      .CARRYINSELREG(0), .CREG(0), .DREG(0), .INMODEREG(0), .MREG(0), .OPMODEREG(0), .PREG(0)
  ) dsp (
      .CLK(1'b0),
      .A({{4{wb[7]}}, wb, 18'd0}),
      .B({{10{x[7]}}, x}),
      .C(48'd0),
      .D({{19{wa[7]}}, wa}),
      .CARRYIN(1'b0),
      .ALUMODE(4'b0000),                          // Z + W + X + Y + CIN
      .INMODE(5'b00100),                          // AD = D + A2 (A2 = A: AREG = 0)
      .OPMODE({2'b00, CASCADE ? 3'b001 : 3'b000, 2'b01, 2'b01}),  // W = 0, Z = PCIN or 0, X·Y = M
      .CARRYINSEL(3'b000),
      .ACIN(30'd0), .BCIN(18'd0), .PCIN(CASCADE ? pcin : 48'd0), .CARRYCASCIN(1'b0), .MULTSIGNIN(1'b0),
      .CEA1(1'b0), .CEA2(1'b0), .CEAD(1'b0), .CEALUMODE(1'b0), .CEB1(1'b0), .CEB2(1'b0), .CEC(1'b0),
      .CECARRYIN(1'b0), .CECTRL(1'b0), .CED(1'b0), .CEINMODE(1'b0), .CEM(1'b0), .CEP(1'b0),
      .RSTA(1'b0), .RSTALLCARRYIN(1'b0), .RSTALUMODE(1'b0), .RSTB(1'b0), .RSTC(1'b0), .RSTCTRL(1'b0),
      .RSTD(1'b0), .RSTINMODE(1'b0), .RSTM(1'b0), .RSTP(1'b0),
      .P(p), .PCOUT(pcout),
      .ACOUT(), .BCOUT(), .CARRYCASCOUT(), .CARRYOUT(), .MULTSIGNOUT(), .OVERFLOW(), .PATTERNBDETECT(),
      .PATTERNDETECT(), .UNDERFLOW(), .XOROUT()
  );
`else
  wire signed [26:0] ad = 27'(wb) * 27'sd262144 + 27'(wa);
  assign p = (CASCADE ? pcin : 48'd0) + 48'(ad * 27'(x));
  assign pcout = p;
`endif
endmodule
