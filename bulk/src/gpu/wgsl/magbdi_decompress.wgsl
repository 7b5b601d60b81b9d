// MAG-aware BDI decompressor (docs/spec/mag-bdi.md), 4-byte base: one
// thread per segment of back-to-back codes. Status 0 exactly when every
// code has a used encoding, its bytes lie within the segment, its padding
// is zero, and the codes use the segment's bits exactly (the CPU decoder's
// BadCode / Truncated / Invalid / TrailingBits otherwise).

struct Params { n: u32, vals: u32, ebits: u32, sizes: u32, signed_mode: u32, slot_words: u32, pad6: u32, pad7: u32 }
@group(0) @binding(0) var<uniform> params: Params;
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
    let nv = params.vals;
    var pos = seg.x;
    var bad = 0u;
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let o = b * nv;
        if (end - pos < params.ebits) { bad = 1u; break; }
        let code = read_bits(pos, params.ebits);
        pos += params.ebits;
        if (code > params.sizes) { bad = 1u; break; }
        if (code == params.sizes) {
            if (end - pos < 32u * nv) { bad = 1u; break; }
            for (var j = 0u; j < nv; j++) {
                out[o + j] = bswap(read_bits(pos + 32u * j, 32u));
            }
            pos += 32u * nv;
            continue;
        }
        let stop_bits = 8u * tables[3u * code];
        let d = tables[3u * code + 1u];
        let used = tables[3u * code + 2u];
        if (end - pos < stop_bits) { bad = 1u; break; }
        let base = read_bits(pos, 32u);
        let mpos = pos + 32u;
        let dpos = mpos + nv;
        for (var j = 0u; j < nv; j++) {
            var x = read_bits(dpos + j * d, d);
            if (params.signed_mode != 0u) {
                x = bitcast<u32>(bitcast<i32>(x << (32u - d)) >> (32u - d));
            }
            out[o + j] = select(x, base + x, read_bit(mpos + j) == 1u);
        }
        var p = pos + used;
        let stop = pos + stop_bits;
        while (p < stop) {
            let m = min(32u, stop - p);
            if (read_bits(p, m) != 0u) { bad = 1u; }
            p += m;
        }
        if (bad != 0u) { break; }
        pos = stop;
    }
    status[s] = select(1u, bad, pos == end);
}
