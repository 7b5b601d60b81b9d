// Co-simulation testbench for the generated DPC units (docs/hw/dpc.md,
// docs/hw/cosim.md). The driver is tb/stream_driver.svh, shared by every
// testbench (schedule, replay after reset, protocol checks); this file only
// binds one DUT to the vector and output buses. One define
// selects the unit:
//
//   DPC_COMPRESSOR         vector in_block (B)          out {out_len, out_bits}
//   DPC_TRUC_COMPRESSOR    vector {in_mask, in_block}   out {out_len, out_bits}
//   DPC_MAN_COMPRESSOR     vector {in_mask, in_block}   out {out_manipulated, out_len, out_bits}
//   DPC_DECOMPRESSOR       vector {in_len, in_bits}     out {out_error, out_block}
//   DPC_TRUC_DECOMPRESSOR  vector {in_len, in_bits}     out {out_mask, out_error, out_block}
//
// B block bits, P packet bits (left-aligned bus), L length bits, K sectors.
// With MUTANTS defined the unit is a mutation schema (hdl_ir::mutate::schema)
// with an extra input `mutant`, driven from the plusarg +mutant=K (0, the
// default: the unit as generated).
`timescale 1ns / 1ps
`define STREAM_TB dpc_tb
module dpc_tb #(
    parameter integer B = 1024,
    parameter integer P = 1025,
    parameter integer L = 11,
    parameter integer K = 4
);
`ifdef DPC_COMPRESSOR
  localparam integer VW = B;
  localparam integer OW = L + P;
`elsif DPC_TRUC_COMPRESSOR
  localparam integer VW = K + B;
  localparam integer OW = L + P;
`elsif DPC_MAN_COMPRESSOR
  localparam integer VW = K + B;
  localparam integer OW = 1 + L + P;
`elsif DPC_DECOMPRESSOR
  localparam integer VW = L + P;
  localparam integer OW = 1 + B;
`else
  localparam integer VW = L + P;
  localparam integer OW = K + 1 + B;
`endif
  localparam integer RING = 256;

  reg clk = 1'b0;
  always #5 clk = ~clk;

  reg rst = 1'b1;
  reg in_valid = 1'b0;
  reg out_ready = 1'b0;
  reg [VW-1:0] in_vec = {VW{1'b0}};
  wire in_ready;
  wire out_valid;
  wire [OW-1:0] out_all;
`ifdef MUTANTS
  reg [15:0] mutant_sel;
  initial if (!$value$plusargs("mutant=%d", mutant_sel)) mutant_sel = 16'd0;
`endif

`ifdef DPC_COMPRESSOR
  wire [P-1:0] out_bits;
  wire [L-1:0] out_len;
  dpc_compressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_bits(out_bits),
      .out_len(out_len)
  );
  assign out_all = {out_len, out_bits};
`elsif DPC_TRUC_COMPRESSOR
  wire [P-1:0] out_bits;
  wire [L-1:0] out_len;
  dpc_truc_compressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec[B-1:0]),
      .in_mask(in_vec[VW-1:B]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_bits(out_bits),
      .out_len(out_len)
  );
  assign out_all = {out_len, out_bits};
`elsif DPC_MAN_COMPRESSOR
  wire [P-1:0] out_bits;
  wire [L-1:0] out_len;
  wire out_manipulated;
  dpc_man_compressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec[B-1:0]),
      .in_mask(in_vec[VW-1:B]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_bits(out_bits),
      .out_len(out_len),
      .out_manipulated(out_manipulated)
  );
  assign out_all = {out_manipulated, out_len, out_bits};
`elsif DPC_DECOMPRESSOR
  wire [B-1:0] out_block;
  wire out_error;
  dpc_decompressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_bits(in_vec[P-1:0]),
      .in_len(in_vec[VW-1:P]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error)
  );
  assign out_all = {out_error, out_block};
`else
  wire [B-1:0] out_block;
  wire out_error;
  wire [K-1:0] out_mask;
  dpc_truc_decompressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_bits(in_vec[P-1:0]),
      .in_len(in_vec[VW-1:P]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error),
      .out_mask(out_mask)
  );
  assign out_all = {out_mask, out_error, out_block};
`endif

`include "stream_driver.svh"
endmodule
