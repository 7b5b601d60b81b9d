// See pack.wgsl: chunk byte offsets of a window (one thread; a window
// holds at most 4096 chunks).

@group(0) @binding(0) var<uniform> chunks: vec4<u32>;
@group(0) @binding(1) var<storage, read> chunk_bits: array<u32>;
@group(0) @binding(2) var<storage, read_write> chunk_byte: array<u32>;

@compute @workgroup_size(1)
fn window_scan() {
    var acc = 0u;
    for (var k = 0u; k < chunks.x; k++) {
        chunk_byte[k] = acc;
        acc += (chunk_bits[k] + 7u) / 8u;
    }
    chunk_byte[chunks.x] = acc;
}
