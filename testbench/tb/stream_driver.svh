// The testbench driver shared by every co-simulation testbench
// (tb/mpc_tb.sv, tb/bdi_tb.sv, tb/dpc_tb.sv; docs/hw/cosim.md), for any
// DUT with one valid/ready input and one valid/ready output. The including
// module declares, before `include "stream_driver.svh":
//
//   `define STREAM_TB      <module name>   (for $dumpvars)
//   localparam VW, OW; RING
//   reg clk, rst, in_valid, out_ready; reg [VW-1:0] in_vec;
//   wire in_ready, out_valid; wire [OW-1:0] out_all
//
// Plusargs:
//   +vectors=FILE   input vectors: one VW-bit hex value per line  (required)
//   +schedule=FILE  per-cycle stall/backpressure/reset masks      (required)
//   +out=FILE       output records                                (required)
//   +n=N            number of vectors (outputs expected)          (required)
//   +timeout=C      give up after C cycles without an output      (100000)
//   +progress=K     print "progress N" every K outputs            (0 = never)
//   +stages=S       the DUT's pipeline depth: turns on the handshake rules
//                   4-6 below (0, the default: off)
//   +vcd=FILE +vcd_from=C +vcd_to=C   dump cycles C..C (TB_TRACE only)
//
// Schedule file: one line per 32 cycles, three 32-bit hex masks
// "valid_enable ready reset"; bit c of a line's masks is cycle 32*line + c.
// Past its end every cycle is valid_enable=1 ready=1 reset=0.
//
// Output records (all numbers hex):
//   O idx cycle latency out_all   one per accepted output, in order
//   R cycle first n      reset asserted in cycle `cycle`: vectors first..first+n-1
//                        were in flight (dropped); they are offered again
//   P cycle code         handshake rule broken in cycle `cycle`:
//                        1 out_valid dropped while stalled (no handshake took it)
//                        2 output changed while stalled
//                        3 out_valid high in or right after reset (reset value)
//                        4 in_ready high while full: S blocks in flight and
//                          out_ready low (the DUT would overwrite one)
//                        5 in_ready low with room: fewer than S blocks in
//                          flight, or out_ready high (a cycle lost)
//                        6 out_valid high with no block in flight
//                        Rules 4-6 are the S-stage ready chain (a stage
//                        loads when it is empty or its content moves on),
//                        the same pipeline the timing model assumes.
//   E text               the run could not finish (timeout, vector file short)
//   D cycles outputs     finished
  // ---- files and settings
  reg [8*1024-1:0] vec_name;
  reg [8*1024-1:0] sched_name;
  reg [8*1024-1:0] out_name;
  reg [8*1024-1:0] vcd_name;
  integer fv, fs, fo;
  integer n_total;
  integer timeout;
  integer progress;
  integer stages;
  integer vcd_from;
  integer vcd_to;
  reg vcd_on;

  // ---- driver state
  integer boot;  // initial reset cycles left
  integer cyc;  // schedule cycle (0 = first cycle after the initial reset)
  integer n_read;  // vectors read from the file so far
  integer next_idx;  // index of the vector offered next (or being offered)
  integer n_out;  // outputs delivered
  integer idle;  // cycles since the last output
  integer r;
  integer slot;
  reg [VW-1:0] ring[0:RING-1];  // vectors that may have to be offered again
  integer acc_cyc[0:RING-1];  // cycle in which each vector was accepted
  reg [VW-1:0] vbuf;
  reg [31:0] m_valid, m_ready, m_rst;
  integer sched_line;  // schedule line held in the masks (-1: none)
  reg sched_eof;
  reg hold_check;  // out_valid && !out_ready at the previous edge
  reg [OW-1:0] prev_out;
  reg after_rst;  // reset was high at the previous edge
  reg s_valid, s_ready, s_rst;

  initial begin
    if (!$value$plusargs("vectors=%s", vec_name)) begin
      $display("stream_tb: FATAL: +vectors=FILE missing");
      $finish;
    end
    if (!$value$plusargs("schedule=%s", sched_name)) begin
      $display("stream_tb: FATAL: +schedule=FILE missing");
      $finish;
    end
    if (!$value$plusargs("out=%s", out_name)) begin
      $display("stream_tb: FATAL: +out=FILE missing");
      $finish;
    end
    if (!$value$plusargs("n=%d", n_total)) begin
      $display("stream_tb: FATAL: +n=N missing");
      $finish;
    end
    if (!$value$plusargs("timeout=%d", timeout)) timeout = 100000;
    if (!$value$plusargs("progress=%d", progress)) progress = 0;
    if (!$value$plusargs("stages=%d", stages)) stages = 0;
    vcd_on = 1'b0;
    if (!$value$plusargs("vcd=%s", vcd_name)) vcd_name = 0;
    if (!$value$plusargs("vcd_from=%d", vcd_from)) vcd_from = -1;
    if (!$value$plusargs("vcd_to=%d", vcd_to)) vcd_to = -1;
    // (Verilator 5.006 drops a file handle that is only used by $fscanf
    // unless it is also read here.)
    fv = $fopen(vec_name, "r");
    if (fv == 0) begin
      $display("stream_tb: FATAL: cannot open vectors %0s", vec_name);
      $finish;
    end
    fs = $fopen(sched_name, "r");
    if (fs == 0) begin
      $display("stream_tb: FATAL: cannot open schedule %0s", sched_name);
      $finish;
    end
    fo = $fopen(out_name, "w");
    if (fo == 0) begin
      $display("stream_tb: FATAL: cannot write %0s", out_name);
      $finish;
    end
    boot = 4;
    cyc = 0;
    n_read = 0;
    next_idx = 0;
    n_out = 0;
    idle = 0;
    sched_line = -1;
    sched_eof = 1'b0;
    m_valid = 32'hffffffff;
    m_ready = 32'hffffffff;
    m_rst = 32'h0;
    hold_check = 1'b0;
    prev_out = {OW{1'b0}};
    after_rst = 1'b1;
    // an output with no vector accepted in its slot (handshake rule 6)
    // still gets a number for its latency
    for (slot = 0; slot < RING; slot = slot + 1) acc_cyc[slot] = 0;
    if (vcd_from == 0) start_dump();
  end

  task start_dump;
    begin
`ifdef TB_TRACE
      if (vcd_name != 0 && !vcd_on) begin
        $dumpfile(vcd_name);
        $dumpvars(0, `STREAM_TB);
        vcd_on = 1'b1;
      end
`else
      if (vcd_name != 0) $display("stream_tb: +vcd ignored: compiled without TB_TRACE");
`endif
    end
  endtask

  task finish_run;
    begin
`ifdef TB_TRACE
      if (vcd_on) $dumpflush;
`endif
      $fclose(fo);
      $fflush();
      $finish;
    end
  endtask

  // Schedule bits of cycle c (lines are read as c advances).
  task sched_bits(input integer c);
    begin
      while (!sched_eof && sched_line < c / 32) begin
        r = $fscanf(fs, "%h %h %h\n", m_valid, m_ready, m_rst);
        if (r != 3) begin
          sched_eof = 1'b1;
          m_valid = 32'hffffffff;
          m_ready = 32'hffffffff;
          m_rst = 32'h0;
        end else sched_line = sched_line + 1;
      end
      if (sched_eof) begin
        s_valid = 1'b1;
        s_ready = 1'b1;
        s_rst = 1'b0;
      end else begin
        s_valid = m_valid[c%32];
        s_ready = m_ready[c%32];
        s_rst = m_rst[c%32];
      end
    end
  endtask

  // Vector i into vbuf (from the replay ring, or the next line of the file).
  task fetch(input integer i);
    begin
      if (i < n_read) vbuf = ring[i%RING];
      else begin
        r = $fscanf(fv, "%h\n", vbuf);
        if (r != 1) begin
          $display("stream_tb: ERROR: vector file ends at vector %0d of %0d", n_read, n_total);
          $fwrite(fo, "E vector file ends at vector %0d of %0d\n", n_read, n_total);
          finish_run();
        end
        ring[n_read%RING] = vbuf;
        n_read = n_read + 1;
      end
    end
  endtask

  // Drive the inputs of cycle c (after the edge that ended cycle c-1).
  task drive(input integer c);
    begin
      if (vcd_from > 0 && c == vcd_from) start_dump();
      if (vcd_to >= 0 && c == vcd_to) begin
        $fwrite(fo, "E vcd window ends at cycle %0h\n", c);
        finish_run();
      end
      sched_bits(c);
      if (s_rst && !rst) begin
        // blocks accepted but not delivered are dropped by the reset
        $fwrite(fo, "R %0h %0h %0h\n", c, n_out, next_idx - n_out);
        next_idx = n_out;
      end
      rst <= s_rst;
      if (s_rst) begin
        in_valid  <= 1'b0;
        out_ready <= 1'b0;
      end else begin
        out_ready <= s_ready;
        if (in_valid && !in_ready && !rst) begin
          // an offer stays until it is taken
        end else if (next_idx < n_total && s_valid) begin
          if (next_idx - n_out >= RING) begin
            $display("stream_tb: ERROR: more than %0d blocks in flight", RING);
            $fwrite(fo, "E more than %0d blocks in flight\n", RING);
            finish_run();
          end
          fetch(next_idx);
          in_vec   <= vbuf;
          in_valid <= 1'b1;
        end else in_valid <= 1'b0;
      end
    end
  endtask

  always @(posedge clk) begin
    if (boot > 0) begin
      boot = boot - 1;
      if (boot == 0) drive(0);
    end else begin
      // ---- sample the edge that ends cycle `cyc`
      if (!rst) begin
        if (after_rst && out_valid) $fwrite(fo, "P %0h 3\n", cyc);
        if (hold_check && !out_valid) $fwrite(fo, "P %0h 1\n", cyc);
        else if (hold_check && out_all !== prev_out) $fwrite(fo, "P %0h 2\n", cyc);
        if (stages > 0) begin
          // blocks in flight: accepted, not yet delivered
          if (in_ready && next_idx - n_out >= stages && !out_ready) $fwrite(fo, "P %0h 4\n", cyc);
          if (!in_ready && !(next_idx - n_out >= stages && !out_ready))
            $fwrite(fo, "P %0h 5\n", cyc);
          if (out_valid && next_idx == n_out) $fwrite(fo, "P %0h 6\n", cyc);
        end
        if (out_valid && out_ready) begin
          slot = n_out % RING;
          $fwrite(fo, "O %0h %0h %0h %h\n", n_out, cyc, cyc - acc_cyc[slot], out_all);
          n_out = n_out + 1;
          idle  = 0;
          if (progress > 0 && n_out % progress == 0) begin
            $display("progress %0d", n_out);
            $fflush();
          end
        end
        if (in_valid && in_ready) begin
          acc_cyc[next_idx%RING] = cyc;
          next_idx = next_idx + 1;
        end
        hold_check = out_valid && !out_ready;
        prev_out   = out_all;
        after_rst  = 1'b0;
      end else begin
        if (after_rst && boot == 0 && out_valid && cyc > 0) $fwrite(fo, "P %0h 3\n", cyc);
        hold_check = 1'b0;
        after_rst  = 1'b1;
      end
      if (n_out >= n_total) begin
        $fwrite(fo, "D %0h %0h\n", cyc + 1, n_out);
        finish_run();
      end
      idle = idle + 1;
      if (idle > timeout) begin
        $display("stream_tb: TIMEOUT: no output for %0d cycles at cycle %0d; delivered %0d of %0d",
                 timeout, cyc, n_out, n_total);
        $fwrite(fo, "E timeout: no output for %0d cycles at cycle %0d; delivered %0d of %0d\n",
                timeout, cyc, n_out, n_total);
        finish_run();
      end
      cyc = cyc + 1;
      drive(cyc);
    end
  end
