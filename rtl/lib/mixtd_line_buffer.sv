// The input buffer of a windowed block (conv stage, pooling): the RTL twin
// of sc::LineBuffer (models/sc/src/LineBuffer.cpp), with the same capacity
// and the same rules for when a pixel may enter and a window may start.
//
// Input: the frame pixel by pixel, C words per pixel in C/P_IN beats of
// P_IN words. Pixels go into a ring of CAP pixel slots (CAP is
// arch::line_buffer_pixels, passed in by the generator so that one C++
// function decides it); pixel g of the stream takes slot g mod CAP.
//
//  * A pixel no window reads (stride beyond the kernel, rows or columns cut
//    off at the bottom or right) is accepted and dropped.
//  * Any other pixel waits until the slot's previous pixel (g − CAP) is no
//    longer needed: the windows up to the last one reading it have been
//    released (for a dropped previous pixel: the windows whose first pixel
//    precedes it). `need` below is that window count; it is separable into
//    a row and a column table.
//
// Compute side: the current window (raster order, across frames) is
// `win_valid` once its last pixel is in (the cycle after its last beat).
// The compute block reads it with `rd_en`: channel chunk `rd_cc` (P_IN
// words) at kernel chunk `rd_kc` (kernel positions rd_kc·FINE … +FINE−1,
// raster order over kh×kw), FINE·P_IN words one cycle later on `rd_data`
// (port n, word m in lane n·P_IN + m; zero for padding, and rd_pad[n]
// set: pooling must tell padding from a zero). `win_release`
// with the window's last read frees it: its slots can be written from the
// next cycle on.
module mixtd_line_buffer #(
    parameter int C = 8,
    parameter int H = 8,
    parameter int W = 8,
    parameter int KH = 3,
    parameter int KW = 3,
    parameter int SH = 1,
    parameter int SW = 1,
    parameter int PH = 1,
    parameter int PW = 1,
    parameter int P_IN = 1,
    parameter int FINE = 1,
    parameter int CAP = 32,
    // Derived (do not set): index widths of the channel and kernel chunks.
    parameter int CCW = C / P_IN > 1 ? $clog2(C / P_IN) : 1,
    parameter int KCW = KH * KW / FINE > 1 ? $clog2(KH * KW / FINE) : 1
) (
    input  logic                     clk,
    input  logic                     rst_n,
    input  logic                     in_valid,
    output logic                     in_ready,
    input  logic [P_IN*8-1:0]        in_data,
    output logic                     win_valid,
    input  logic                     rd_en,
    input  logic [CCW-1:0]           rd_cc,
    input  logic [KCW-1:0]           rd_kc,
    output logic [FINE*P_IN*8-1:0]   rd_data,
    output logic [FINE-1:0]          rd_pad,
    input  logic                     win_release
);
  localparam int HO = (H + 2 * PH - KH) / SH + 1;
  localparam int WO = (W + 2 * PW - KW) / SW + 1;
  localparam int NW = HO * WO;
  localparam int HW = H * W;
  localparam int KK = KH * KW;
  localparam int BEATS = C / P_IN;
  localparam int KCH = KK / FINE;
  localparam int SLOTW = CAP > 1 ? $clog2(CAP) : 1;
  localparam int ADDRW = CAP * BEATS > 1 ? $clog2(CAP * BEATS) : 1;
  // Index widths; the tables below have 2^width entries (the extra ones are
  // never addressed) so that every index is exactly as wide as its table.
  localparam int HB = H > 1 ? $clog2(H) : 1, WB = W > 1 ? $clog2(W) : 1;
  localparam int HOB = HO > 1 ? $clog2(HO) : 1, WOB = WO > 1 ? $clog2(WO) : 1;
  localparam int KB = $clog2(NW + 2);
  localparam int PB = $clog2(HW + 1);
  // Signed window coordinates: −PH … H+PH.
  localparam int RB = $clog2(H + 2 * PH + KH + 2) + 1, QB = $clog2(W + 2 * PW + KW + 2) + 1;

  // (x mod CAP) in [0, CAP) for any sign of x.
  localparam int ORIGIN0 = ((-(PH * W + PW)) % CAP + CAP) % CAP;
  localparam int STEP_COL = (SW % CAP + CAP) % CAP;
  localparam int STEP_ROW = ((SH * W - (WO - 1) * SW) % CAP + CAP) % CAP;
  localparam int STEP_FRAME = ((HW - (HO - 1) * SH * W - (WO - 1) * SW) % CAP + CAP) % CAP;

  // ---- per-row / per-column tables (constants) -----------------------------
  // I(r): the last window row reading row r (or whose first row precedes
  // it); row_used: some window reads row r; row_first: row r is the first
  // row of window row I(r). Columns alike.
  logic [KB-1:0] row_i[1<<HB];
  logic row_used[1<<HB], row_first[1<<HB];
  logic [KB-1:0] col_j[1<<WB];
  logic col_used[1<<WB];
  logic [PB-1:0] win_last_row[1<<HOB];  // last pixel row a window row reads, × W
  logic [WB-1:0] win_last_col[1<<WOB];
  for (genvar r = 0; r < (1 << HB); r = r + 1) begin : g_rows
    localparam int I = (r + PH) / SH > HO - 1 ? HO - 1 : (r + PH) / SH;
    localparam int R0 = I * SH - PH < 0 ? 0 : I * SH - PH;
    assign row_i[r] = KB'(I);
    assign row_used[r] = r >= I * SH - PH && r <= I * SH - PH + KH - 1;
    assign row_first[r] = R0 == r;
  end
  for (genvar q = 0; q < (1 << WB); q = q + 1) begin : g_cols
    localparam int J = (q + PW) / SW > WO - 1 ? WO - 1 : (q + PW) / SW;
    assign col_j[q] = KB'(J);
    assign col_used[q] = q >= J * SW - PW && q <= J * SW - PW + KW - 1;
  end
  for (genvar i = 0; i < (1 << HOB); i = i + 1) begin : g_win_rows
    localparam int R1 = i * SH - PH + KH - 1 > H - 1 ? H - 1 : i * SH - PH + KH - 1;
    assign win_last_row[i] = PB'(R1 * W);
  end
  for (genvar j = 0; j < (1 << WOB); j = j + 1) begin : g_win_cols
    localparam int C1 = j * SW - PW + KW - 1 > W - 1 ? W - 1 : j * SW - PW + KW - 1;
    assign win_last_col[j] = WB'(C1);
  end

  // ---- write side ---------------------------------------------------------
  logic [CCW-1:0] wr_beat;
  logic [HB-1:0] wr_r;
  logic [WB-1:0] wr_q;
  logic [SLOTW-1:0] wr_slot;
  // Frame counters, compared modulo 2^8: the writer is never more than a
  // few frames ahead of the windows (CAP pixels), far below 128.
  logic [7:0] wr_frame;
  logic wrapped;  // CAP pixels have entered: every write reuses a slot
  logic [HB-1:0] old_r;  // pixel g − CAP
  logic [WB-1:0] old_q;
  logic [7:0] old_frame;
  logic [PB-1:0] pix_in;  // complete pixels of frame wr_frame

  // ---- window side --------------------------------------------------------
  // a·K for a constant K as shifts and adds. yosys maps a $mul by a constant
  // that is not a power of two to a DSP48E2; index arithmetic in fabric
  // keeps a stage's DSPs its MAC array's (models/arch dsps_for).
  function automatic logic [31:0] times_const(input logic [31:0] a, input int k);
    times_const = 32'd0;
    for (int i = 0; i < 31; i = i + 1)
      if (k[i]) times_const = times_const + (a << i);
  endfunction

  logic [7:0] win_frame;
  logic [HOB-1:0] win_i;
  logic [WOB-1:0] win_j;
  logic [KB-1:0] win_k;  // k = i·WO + j: windows released in win_frame
  logic [SLOTW-1:0] win_origin;  // slot of pixel (i·SH − PH, j·SW − PW), mod CAP
  logic signed [RB-1:0] win_r0;
  logic signed [QB-1:0] win_q0;

  wire dropped = !(row_used[wr_r] && col_used[wr_q]);
  wire [KB-1:0] old_need = row_used[old_r] && col_used[old_q] || row_first[old_r] ?
      KB'(times_const(32'(row_i[old_r]), WO) + 32'(col_j[old_q]) + 32'd1) :
      KB'(times_const(32'(row_i[old_r]) + 32'd1, WO));
  wire signed [7:0] frames_ahead = $signed(win_frame - old_frame);
  wire slot_free = !wrapped || frames_ahead > 0 || frames_ahead == 0 && win_k >= old_need;
  assign in_ready = dropped || slot_free;

  wire push = in_valid && in_ready;
  wire last_beat = wr_beat == CCW'(BEATS - 1);
  wire pixel_done = push && last_beat;
  wire frame_done = pixel_done && wr_r == HB'(H - 1) && wr_q == WB'(W - 1);

  logic [P_IN*8-1:0] mem[CAP*BEATS];
  always_ff @(posedge clk)
    if (push && !dropped) mem[ADDRW'(times_const(32'(wr_slot), BEATS) + 32'(wr_beat))] <= in_data;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wr_beat <= '0;
      wr_r <= '0;
      wr_q <= '0;
      wr_slot <= '0;
      wr_frame <= '0;
      wrapped <= 1'b0;
      old_r <= '0;
      old_q <= '0;
      old_frame <= '0;
      pix_in <= '0;
    end else if (push) begin
      wr_beat <= last_beat ? '0 : wr_beat + 1'b1;
      if (last_beat) begin
        wr_q <= wr_q == WB'(W - 1) ? '0 : wr_q + 1'b1;
        if (wr_q == WB'(W - 1)) wr_r <= wr_r == HB'(H - 1) ? '0 : wr_r + 1'b1;
        pix_in <= frame_done ? '0 : pix_in + 1'b1;
        if (frame_done) wr_frame <= wr_frame + 1'b1;
        wr_slot <= wr_slot == SLOTW'(CAP - 1) ? '0 : wr_slot + 1'b1;
        if (wr_slot == SLOTW'(CAP - 1)) wrapped <= 1'b1;
        if (wrapped) begin
          old_q <= old_q == WB'(W - 1) ? '0 : old_q + 1'b1;
          if (old_q == WB'(W - 1)) begin
            old_r <= old_r == HB'(H - 1) ? '0 : old_r + 1'b1;
            if (old_r == HB'(H - 1)) old_frame <= old_frame + 1'b1;
          end
        end
      end
    end
  end

  // ---- the current window -------------------------------------------------
  // Modulo, as frames_ahead: a difference of zero-extended counters went
  // negative when wr_frame wrapped (15 -> 0 with 4 bits), and the buffer
  // deadlocked at frame 16.
  wire signed [7:0] in_ahead = $signed(wr_frame - win_frame);
  wire [PB-1:0] win_last = win_last_row[win_i] + PB'(win_last_col[win_j]);
  assign win_valid = in_ahead > 0 || in_ahead == 0 && pix_in > win_last;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      win_frame <= '0;
      win_i <= '0;
      win_j <= '0;
      win_k <= '0;
      win_origin <= SLOTW'(ORIGIN0);
      win_r0 <= RB'(-PH);
      win_q0 <= QB'(-PW);
    end else if (win_release) begin
      if (win_j == WOB'(WO - 1)) begin
        win_j <= '0;
        win_q0 <= QB'(-PW);
        if (win_i == HOB'(HO - 1)) begin
          win_i <= '0;
          win_k <= '0;
          win_r0 <= RB'(-PH);
          win_frame <= win_frame + 1'b1;
          win_origin <= mod_add(win_origin, SLOTW'(STEP_FRAME));
        end else begin
          win_i <= win_i + 1'b1;
          win_k <= win_k + 1'b1;
          win_r0 <= win_r0 + RB'(SH);
          win_origin <= mod_add(win_origin, SLOTW'(STEP_ROW));
        end
      end else begin
        win_j <= win_j + 1'b1;
        win_k <= win_k + 1'b1;
        win_q0 <= win_q0 + QB'(SW);
        win_origin <= mod_add(win_origin, SLOTW'(STEP_COL));
      end
    end
  end

  // (a + b) mod CAP for a, b < CAP.
  function automatic [SLOTW-1:0] mod_add;
    input [SLOTW-1:0] a;
    input [SLOTW-1:0] b;
    reg [SLOTW:0] s;
    begin
      s = {1'b0, a} + {1'b0, b};
      mod_add = s >= (SLOTW + 1)'(CAP) ? SLOTW'(s - (SLOTW + 1)'(CAP)) : SLOTW'(s);
    end
  endfunction

  // ---- reads: FINE kernel positions of channel chunk rd_cc -----------------
  for (genvar n = 0; n < FINE; n = n + 1) begin : g_ports
    logic [SLOTW-1:0] off[KCH];  // (u·W + v) mod CAP of position kc·FINE + n
    logic signed [RB-1:0] du[KCH];
    logic signed [QB-1:0] dv[KCH];
    for (genvar kc = 0; kc < KCH; kc = kc + 1) begin : g_pos
      localparam int KPOS = kc * FINE + n;
      localparam int U = KPOS / KW, V = KPOS % KW;
      assign off[kc] = SLOTW'((U * W + V) % CAP);
      assign du[kc] = RB'(U);
      assign dv[kc] = QB'(V);
    end
    wire signed [RB-1:0] r = win_r0 + du[rd_kc];
    wire signed [QB-1:0] q = win_q0 + dv[rd_kc];
    wire pad = r < 0 || r >= RB'(H) || q < 0 || q >= QB'(W);
    wire [SLOTW-1:0] slot = mod_add(win_origin, off[rd_kc]);
    always_ff @(posedge clk)
      if (rd_en) begin
        rd_data[n*P_IN*8+:P_IN*8] <= pad ? '0 : mem[ADDRW'(times_const(32'(slot), BEATS) + 32'(rd_cc))];
        rd_pad[n] <= pad;
      end
  end
endmodule
