// Co-simulation testbench for the generated MAG-aware BDI units
// (docs/hw/mag-bdi.md, docs/hw/cosim.md). The driver is
// tb/stream_driver.svh, shared by every testbench (schedule, replay after
// reset, protocol checks, plusargs and record format); this file only binds
// the DUT to the vector and output buses. One define selects the unit:
//
//   UNIT_COMPRESSOR    bdi_compressor    vector in_block (B)          out {out_enc, out_data}
//   UNIT_DECOMPRESSOR  bdi_decompressor  vector {in_enc, in_data}     out {out_block, out_error}
//   UNIT_LOOPBACK      bdi_compressor -> bdi_decompressor, vector and out as above
//
// E encoding bits, B block bits.
// With MUTANTS defined the compressor or decompressor is a mutation schema (hdl_ir::mutate::schema)
// with an extra input `mutant`, driven from the plusarg +mutant=K (0, the
// default: the unit as generated).
`timescale 1ns / 1ps
`define STREAM_TB bdi_tb
module bdi_tb #(
    parameter integer E = 2,
    parameter integer B = 1024
);
`ifdef UNIT_DECOMPRESSOR
  localparam integer VW = E + B;
`else
  localparam integer VW = B;
`endif
`ifdef UNIT_COMPRESSOR
  localparam integer OW = E + B;
`else
  localparam integer OW = B + 1;
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

`ifdef UNIT_COMPRESSOR
  wire [E-1:0] out_enc;
  wire [B-1:0] out_data;
  bdi_compressor dut (
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
      .out_enc(out_enc),
      .out_data(out_data)
  );
  assign out_all = {out_enc, out_data};
`elsif UNIT_DECOMPRESSOR
  wire [B-1:0] out_block;
  wire out_error;
  bdi_decompressor dut (
`ifdef MUTANTS
      .mutant(mutant_sel),
`endif
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_enc(in_vec[VW-1:B]),
      .in_data(in_vec[B-1:0]),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error)
  );
  assign out_all = {out_block, out_error};
`else
  wire c_valid;
  wire c_ready;
  wire [E-1:0] c_enc;
  wire [B-1:0] c_data;
  wire [B-1:0] out_block;
  wire out_error;
  bdi_compressor comp (
      .clk(clk),
      .rst(rst),
      .in_valid(in_valid),
      .in_ready(in_ready),
      .in_block(in_vec),
      .out_valid(c_valid),
      .out_ready(c_ready),
      .out_enc(c_enc),
      .out_data(c_data)
  );
  bdi_decompressor dec (
      .clk(clk),
      .rst(rst),
      .in_valid(c_valid),
      .in_ready(c_ready),
      .in_enc(c_enc),
      .in_data(c_data),
      .out_valid(out_valid),
      .out_ready(out_ready),
      .out_block(out_block),
      .out_error(out_error)
  );
  assign out_all = {out_block, out_error};
`endif

`include "stream_driver.svh"
endmodule
