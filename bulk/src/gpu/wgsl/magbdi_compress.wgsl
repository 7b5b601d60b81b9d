// MAG-aware BDI compressor (docs/spec/mag-bdi.md), 4-byte base: one thread
// per block of `vals` little-endian 32-bit values. The sizes are tried
// smallest first (tables: bytes, delta bits, used bits per size); the
// first whose unit succeeds wins, else the block is raw. Code: the
// `ebits`-bit encoding, then base | bitmask | deltas | zero padding to the
// size's bytes, or the block's bytes for raw.

struct Params { n: u32, vals: u32, ebits: u32, sizes: u32, signed_mode: u32, slot_words: u32, pad6: u32, pad7: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

fn bswap(x: u32) -> u32 {
    return (x << 24u) | ((x & 0xff00u) << 8u) | ((x >> 8u) & 0xff00u) | (x >> 24u);
}

// Does `v` fit a `d`-bit delta field (1 <= d < 32)?
fn fits(v: u32, d: u32) -> bool {
    if (params.signed_mode == 0u) {
        return (v >> d) == 0u;
    }
    let top = v >> (d - 1u);
    return top == 0u || top == (0xffffffffu >> (d - 1u));
}

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    let nv = params.vals;
    let at = i * nv;
    var code = params.sizes;
    var base = 0u;
    for (var e = 0u; e < params.sizes; e++) {
        let d = tables[3u * e + 1u];
        var found = false;
        var b = 0u;
        var ok = true;
        for (var j = 0u; j < nv; j++) {
            let v = input[at + j];
            if (!fits(v, d)) {
                if (!found) {
                    found = true;
                    b = v;
                }
                if (!fits(v - b, d)) {
                    ok = false;
                    break;
                }
            }
        }
        if (ok) {
            code = e;
            base = b;
            break;
        }
    }
    var w = bw_start(i * params.slot_words, params.slot_words);
    bw_put(&w, code, params.ebits);
    if (code == params.sizes) {
        for (var j = 0u; j < nv; j++) {
            bw_put(&w, bswap(input[at + j]), 32u);
        }
        lens[i] = w.pos;
        return;
    }
    let d = tables[3u * code + 1u];
    bw_put(&w, base, 32u);
    for (var c = 0u; c < nv; c += 32u) {
        let m = min(32u, nv - c);
        var bits = 0u;
        for (var jj = 0u; jj < m; jj++) {
            bits = (bits << 1u) | select(1u, 0u, fits(input[at + c + jj], d));
        }
        bw_put(&w, bits, m);
    }
    for (var j = 0u; j < nv; j++) {
        let v = input[at + j];
        bw_put(&w, select(v - base, v, fits(v, d)), d);
    }
    // the slot is zeroed: the padding up to the size's bytes is in place
    lens[i] = params.ebits + 8u * tables[3u * code];
}
