// Plain DPC decompressor (docs/spec/dpc.md), 4-byte segments: one thread
// per segment of back-to-back packets. Status 0 exactly when every packet
// decodes within the segment's bits and they are used exactly (the CPU
// decoder's Truncated / TrailingBits otherwise).

struct Params { n: u32, segs: u32, slot_words: u32, pad3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
// tables[0] = 0 (no table is needed; it seeds the status)
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> payload: array<u32>;
@group(0) @binding(3) var<storage, read> segs: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<u32>;

fn bswap(x: u32) -> u32 {
    return (x << 24u) | ((x & 0xff00u) << 8u) | ((x >> 8u) & 0xff00u) | (x >> 24u);
}

// Stream bit `pos` of the payload (one word read).
fn read_bit(pos: u32) -> u32 {
    return (payload[pos >> 5u] >> (((pos >> 3u) & 3u) * 8u + 7u - (pos & 7u))) & 1u;
}

@compute @workgroup_size(64)
fn decompress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = gid.x + gid.y * nwg.x * 64u;
    if (s >= params.n) { return; }
    let seg = segs[s];
    let end = seg.x + seg.y;
    let nseg = params.segs;
    var pos = seg.x;
    var bad = tables[0];
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let o = b * nseg;
        if (end - pos < 1u) { bad = 1u; break; }
        let flag = read_bits(pos, 1u);
        pos += 1u;
        if (flag == 0u) {
            if (end - pos < 32u * nseg) { bad = 1u; break; }
            for (var j = 0u; j < nseg; j++) {
                out[o + j] = bswap(read_bits(pos + 32u * j, 32u));
            }
            pos += 32u * nseg;
            continue;
        }
        if (end - pos < 32u) { bad = 1u; break; }
        let es = reverseBits(read_bits(pos, 32u));
        pos += 32u;
        let k = countOneBits(es);
        if (end - pos < k + (32u - k) * nseg) { bad = 1u; break; }
        // segment j gathers bit g from group g's ED field: the pattern bit
        // of a uniform group, bit j of a mixed one (one word read per bit,
        // one store per segment)
        for (var j = 0u; j < nseg; j++) {
            var p = pos;
            var v = 0u;
            for (var g = 0u; g < 32u; g++) {
                let uni = (es >> g) & 1u;
                v |= read_bit(p + select(j, 0u, uni == 1u)) << g;
                p += select(nseg, 1u, uni == 1u);
            }
            out[o + j] = v;
        }
        pos += k + (32u - k) * nseg;
    }
    status[s] = select(1u, bad, pos == end);
}
