// Decoding segments of chunks that are already on the device (the
// device-resident decompress path): one thread per chunk reads the
// chunk's length table out of the packed payloads, as the host does for
// the host-memory path (docs/spec/container.md, "Chunk payload"), and
// writes its segments (start bit, bits, first block, block count) for the
// decompress kernel. Chunk c's segments start at c * fields (every chunk
// but the last has chunk_blocks blocks, so fields segments). A chunk whose
// table does not add up (a field longer than its blocks can code, fields
// past the chunk's bits, a sum other than the chunk's bits) gets bad[c] =
// 1 and segments of no blocks.

struct Params {
    chunks: u32,       // chunks in the part
    chunk_blocks: u32, // blocks per chunk
    n: u32,            // blocks in the part
    group: u32,        // blocks per table field; 0: no table (one segment a chunk)
    width: u32,        // table field width W
    max_bits: u32,     // widest code of one block
    fields: u32,       // segments of a whole chunk
    pad7: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
@group(0) @binding(2) var<storage, read> chunk_bits: array<u32>;
@group(0) @binding(3) var<storage, read> chunk_byte: array<u32>;
@group(0) @binding(4) var<storage, read_write> segs: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> bad: array<u32>;

@compute @workgroup_size(64)
fn plan(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = gid.x + gid.y * nwg.x * 64u;
    if (c >= params.chunks) {
        return;
    }
    let first = c * params.chunk_blocks;
    let blocks = min(params.chunk_blocks, params.n - first);
    let base = chunk_byte[c] * 8u;
    let cbits = chunk_bits[c];
    if (params.group == 0u) {
        segs[c] = vec4<u32>(base, cbits, first, blocks);
        bad[c] = 0u;
        return;
    }
    let g = params.group;
    let fields = (blocks + g - 1u) / g;
    let s0 = c * params.fields;
    var ok = fields * params.width <= cbits;
    var at = fields * params.width;
    for (var j = 0u; j < fields; j++) {
        let count = min(g, blocks - j * g);
        var len = 0u;
        if (ok) {
            len = read_bits(base + j * params.width, params.width);
            ok = len <= count * params.max_bits && len <= cbits - at;
        }
        if (ok) {
            segs[s0 + j] = vec4<u32>(base + at, len, first + j * g, count);
            at += len;
        } else {
            segs[s0 + j] = vec4<u32>(base, 0u, first, 0u);
        }
    }
    bad[c] = select(1u, 0u, ok && at == cbits);
}
