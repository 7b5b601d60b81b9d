// Plain DPC compressor (docs/spec/dpc.md), 4-byte segments: one thread per
// block of `segs` little-endian 32-bit segments. Group g is bit g of every
// segment; a group that is all zeros or all ones is coded as its one bit.
// Packet: C | ES[0..31] | ED(group 0) .. ED(group 31), or C = 0 and the
// block's bytes when the coded payload is not strictly shorter.

struct Params { n: u32, segs: u32, slot_words: u32, pad3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
// tables[0] = 0 (no table is needed; it seeds the OR of the segments)
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

fn bswap(x: u32) -> u32 {
    return (x << 24u) | ((x & 0xff00u) << 8u) | ((x >> 8u) & 0xff00u) | (x >> 24u);
}

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    let nseg = params.segs;
    let base = i * nseg;
    var all_and = 0xffffffffu;
    var all_or = tables[0];
    for (var j = 0u; j < nseg; j++) {
        let v = input[base + j];
        all_and &= v;
        all_or |= v;
    }
    let es = all_and | ~all_or;
    let k = countOneBits(es);
    let coded = 32u + k + (32u - k) * nseg;
    var w = bw_start(i * params.slot_words, params.slot_words);
    if (coded >= 32u * nseg) {
        bw_put(&w, 0u, 1u);
        for (var j = 0u; j < nseg; j++) {
            bw_put(&w, bswap(input[base + j]), 32u);
        }
    } else {
        bw_put(&w, 1u, 1u);
        // ES[0] first: group 0's flag is the most significant bit written
        bw_put(&w, reverseBits(es), 32u);
        for (var g = 0u; g < 32u; g++) {
            if (((es >> g) & 1u) == 1u) {
                bw_put(&w, (all_and >> g) & 1u, 1u);
            } else {
                for (var c = 0u; c < nseg; c += 32u) {
                    let m = min(32u, nseg - c);
                    var bits = 0u;
                    for (var jj = 0u; jj < m; jj++) {
                        bits = (bits << 1u) | ((input[base + c + jj] >> g) & 1u);
                    }
                    bw_put(&w, bits, m);
                }
            }
        }
    }
    lens[i] = w.pos;
}
