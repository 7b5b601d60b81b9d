// MPC decompress kernel (docs/spec/mpc.md section 8), one thread per
// segment: the segment's blocks are decoded one after the other, each with
// at most min(bits left, max_bits) bits, as the CPU codec's
// `decompress_at` does; status 0 only when every block decodes and the
// blocks use exactly the segment's bits. Table layout as in
// mpc_compress.wgsl.

struct Params {
    n: u32,
    h: u32,
    np: u32,
    flags: u32,
    pred_id0: u32,
    raw_id: u32,
    max_bits: u32,
    slot_words: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> payload: array<u32>;
@group(0) @binding(3) var<storage, read> segs: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<u32>;

const PW: u32 = 168u;
const FLAG_ZERO: u32 = 1u;
const FLAG_SAME: u32 = 2u;
const BAD: u32 = 0xffffffffu;

// Decoded symbols, stream layout as in the compress kernel.
var<private> stream: array<u32, 8>;
// Residues, four bytes to a word (little-endian).
var<private> res: array<u32, 8>;
// The restored block.
var<private> blk: array<u32, 8>;

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

fn tbyte(at: u32, i: u32) -> u32 {
    return (tables[at + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu;
}

// Table-1 codes from `pos` until 16 symbols are complete, none past `lim`;
// returns the position after the last code, or BAD.
fn decode_symbols(start: u32, lim: u32) -> u32 {
    for (var k = 0u; k < 8u; k++) {
        stream[k] = 0u;
    }
    var pos = start;
    var m = 0u;
    while (m < 16u) {
        let w = read_bits(pos, 32u);
        var len = 0u;
        var val = 0u;
        var cnt = 1u;
        if ((w >> 31u) == 1u) {
            val = (w >> 15u) & 0xffffu;
            len = 17u;
        } else if ((w >> 30u) == 1u) {
            let f = (w >> 25u) & 0xfu;
            len = 7u;
            if (((w >> 29u) & 1u) == 0u) {
                if (f < 2u) {
                    return BAD;
                }
                cnt = f;
            } else {
                val = 0x8000u >> f;
            }
        } else {
            let sel = (w >> 28u) & 3u;
            if (sel == 0u) {
                let q = (w >> 24u) & 0xfu;
                if (q == 15u) {
                    return BAD;
                }
                val = 0xc000u >> q;
                len = 8u;
            } else if (sel == 1u) {
                val = (w >> 20u) & 0xffu;
                len = 12u;
            } else if (sel == 2u) {
                val = ((w >> 20u) & 0xffu) << 8u;
                len = 12u;
            } else {
                len = 4u;
            }
        }
        if (len > lim - pos || m + cnt > 16u) {
            return BAD;
        }
        stream[m >> 1u] |= val << (16u * (1u - (m & 1u)));
        m += cnt;
        pos += len;
    }
    return pos;
}

// Inverse stages of predictor p: reorder back, inverse Gray code per byte,
// restoration along the trees (every byte after its base).
fn restore(p: u32) {
    let t = p * PW;
    for (var k = 0u; k < 8u; k++) {
        res[k] = 0u;
        blk[k] = 0u;
    }
    for (var k = 0u; k < 8u; k++) {
        var x = stream[k];
        while (x != 0u) {
            let b = countLeadingZeros(x);
            x &= ~(0x80000000u >> b);
            let n = tbyte(t + 96u, 32u * k + b);
            let j = n & 31u;
            res[j >> 2u] |= (1u << (7u - (n >> 5u))) << ((j & 3u) * 8u);
        }
    }
    for (var k = 0u; k < 8u; k++) {
        var x = res[k];
        x ^= (x >> 1u) & 0x7f7f7f7fu;
        x ^= (x >> 2u) & 0x3f3f3f3fu;
        x ^= (x >> 4u) & 0x0f0f0f0fu;
        res[k] = x;
    }
    for (var q = 0u; q < 32u; q++) {
        let i = tbyte(t + 160u, q);
        let rule = tables[t + i];
        let base = rule & 0xffu;
        var pred = 0u;
        if (base < 32u) {
            let d = (blk[base >> 2u] >> ((base & 3u) * 8u)) & 0xffu;
            pred = ((d << ((rule >> 8u) & 0xfu)) & 0xffu) >> ((rule >> 12u) & 0xfu);
        }
        let r = (res[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
        blk[i >> 2u] |= ((r + pred) & 0xffu) << ((i & 3u) * 8u);
    }
}

// Decode the block at `start` with no bit at or past `lim` into block b of
// `out`; returns the bits used, or BAD.
fn decode_block(start: u32, lim: u32, b: u32) -> u32 {
    let h = params.h;
    if (h > lim - start) {
        return BAD;
    }
    let id = read_bits(start, h);
    let pos = start + h;
    let room = lim - pos;
    let nz = params.flags & FLAG_ZERO;
    let ns = (params.flags & FLAG_SAME) >> 1u;
    let ob = b * 8u;
    if (id > params.raw_id) {
        return BAD;
    }
    if (id < nz) {
        for (var k = 0u; k < 8u; k++) {
            out[ob + k] = 0u;
        }
        return h;
    }
    if (id < nz + ns) {
        if (room < 32u) {
            return BAD;
        }
        let v = bswap(read_bits(pos, 32u));
        for (var k = 0u; k < 8u; k++) {
            out[ob + k] = v;
        }
        return h + 32u;
    }
    if (id == params.raw_id) {
        if (room < 256u) {
            return BAD;
        }
        for (var k = 0u; k < 8u; k++) {
            out[ob + k] = bswap(read_bits(pos + 32u * k, 32u));
        }
        return h + 256u;
    }
    let after = decode_symbols(pos, lim);
    if (after == BAD) {
        return BAD;
    }
    restore(id - params.pred_id0);
    for (var k = 0u; k < 8u; k++) {
        out[ob + k] = blk[k];
    }
    return after - start;
}

@compute @workgroup_size(64)
fn decompress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = gid.x + gid.y * nwg.x * 64u;
    if (s >= params.n) {
        return;
    }
    let seg = segs[s];
    let end = seg.x + seg.y;
    var pos = seg.x;
    var bad = 0u;
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let avail = min(end - pos, params.max_bits);
        if (avail == 0u) {
            bad = 1u;
            break;
        }
        let used = decode_block(pos, pos + avail, b);
        if (used == BAD) {
            bad = 2u;
            break;
        }
        pos += used;
    }
    if (bad == 0u && pos != end) {
        bad = 3u;
    }
    status[s] = bad;
}
