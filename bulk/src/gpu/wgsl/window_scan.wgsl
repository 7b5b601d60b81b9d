// See pack.wgsl: chunk byte offsets of a window (one thread; a window
// holds at most 4096 chunks).

struct Params { chunks: u32, pad1: u32, pad2: u32, pad3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> chunk_bits: array<u32>;
@group(0) @binding(2) var<storage, read_write> chunk_byte: array<u32>;

@compute @workgroup_size(1)
fn window_scan() {
    var acc = 0u;
    for (var k = 0u; k < params.chunks; k++) {
        chunk_byte[k] = acc;
        acc += (chunk_bits[k] + 7u) / 8u;
    }
    chunk_byte[params.chunks] = acc;
}
