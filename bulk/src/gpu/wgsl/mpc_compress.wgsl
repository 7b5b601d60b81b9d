// MPC compress kernel (docs/spec/mpc.md), one thread per 32-byte block.
// Tables per predictor p, at word p * 168 (see `bulk::gpu::mpc`):
//   +0   32 byte rules: base (bits 0..7, 32 = root), left shift (8..11),
//        right shift (12..15): pred = ((d[base] << l) & 0xff) >> r;
//   +32  256 bytes packed four to a word: natural index n -> stream
//        position o (the inverse of the model's reorder);
//   +96  256 bytes: stream position o -> natural index n (the reorder);
//   +160 32 bytes: restore order (every byte after its base).
// The stream is kept as 8 words, stream bit o at bit 31 - o % 32 of word
// o / 32, so word k holds symbol 2k in its high and 2k+1 in its low half.

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
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

const PW: u32 = 168u;
const FLAG_ZERO: u32 = 1u;
const FLAG_SAME: u32 = 2u;
const FLAG_EXACT: u32 = 4u;

var<private> blk: array<u32, 8>;
var<private> stream: array<u32, 8>;

fn byte_of(i: u32) -> u32 {
    return (blk[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

// Stages 1-3 of predictor p on `blk` into `stream`: residues, Gray code per
// byte (the XOR with the upper plane), reorder; only set bits are moved.
fn transform(p: u32) {
    let t = p * PW;
    for (var k = 0u; k < 8u; k++) {
        stream[k] = 0u;
    }
    for (var j = 0u; j < 32u; j++) {
        let rule = tables[t + j];
        let base = rule & 0xffu;
        var pred = 0u;
        if (base < 32u) {
            pred = ((byte_of(base) << ((rule >> 8u) & 0xfu)) & 0xffu) >> ((rule >> 12u) & 0xfu);
        }
        let r = (byte_of(j) - pred) & 0xffu;
        var g = r ^ (r >> 1u);
        while (g != 0u) {
            let pl = countTrailingZeros(g);
            g &= g - 1u;
            let n = 32u * (7u - pl) + j;
            let o = (tables[t + 32u + (n >> 2u)] >> ((n & 3u) * 8u)) & 0xffu;
            stream[o >> 5u] |= 0x80000000u >> (o & 31u);
        }
    }
}

fn symbol(m: u32) -> u32 {
    return (stream[m >> 1u] >> (16u * (1u - (m & 1u)))) & 0xffffu;
}

fn zero_mask() -> u32 {
    var zm = 0u;
    for (var m = 0u; m < 16u; m++) {
        if (symbol(m) == 0u) {
            zm |= 1u << m;
        }
    }
    return zm;
}

// Table-1 code of a nonzero symbol: (bits, length), shortest match.
fn nonzero_code(s: u32) -> vec2<u32> {
    let ones = countOneBits(s);
    let lead = countLeadingZeros(s) - 16u;
    let trail = countTrailingZeros(s);
    var c = vec2<u32>((1u << 16u) | s, 17u);
    if ((s & 0xffu) == 0u) {
        c = vec2<u32>((2u << 8u) | (s >> 8u), 12u);
    }
    if ((s & 0xff00u) == 0u) {
        c = vec2<u32>((1u << 8u) | s, 12u);
    }
    if (ones == 2u && lead + trail == 14u) {
        c = vec2<u32>(lead, 8u);
    }
    if (ones == 1u) {
        c = vec2<u32>((3u << 4u) | lead, 7u);
    }
    return c;
}

// Codes of symbol m as one field: a nonzero symbol its code, the first
// zero of a run the run's codes (16 zeros: run of 15 then one zero), other
// zeros nothing.
fn code_of(m: u32, zm: u32) -> vec2<u32> {
    if (((zm >> m) & 1u) == 0u) {
        return nonzero_code(symbol(m));
    }
    if (m > 0u && ((zm >> (m - 1u)) & 1u) == 1u) {
        return vec2<u32>(0u, 0u);
    }
    let run = countTrailingZeros(~(zm >> m));
    if (run == 1u) {
        return vec2<u32>(3u, 4u);
    }
    if (run == 16u) {
        return vec2<u32>((0x2fu << 4u) | 3u, 11u);
    }
    return vec2<u32>((2u << 4u) | run, 7u);
}

fn code_bits(zm: u32) -> u32 {
    var bits = 0u;
    for (var m = 0u; m < 16u; m++) {
        bits += code_of(m, zm).y;
    }
    return bits;
}

// Longest run of consecutive set bits of a 16-bit mask.
fn longest_run(zm: u32) -> u32 {
    var x = zm;
    var n = 0u;
    while (x != 0u) {
        x &= x << 1u;
        n++;
    }
    return n;
}

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) {
        return;
    }
    var ored = 0u;
    var differ = 0u;
    for (var k = 0u; k < 8u; k++) {
        let v = input[i * 8u + k];
        blk[k] = v;
        ored |= v;
        differ |= v ^ blk[0];
    }
    let flags = params.flags;
    let zero_ok = (flags & FLAG_ZERO) != 0u && ored == 0u;
    let same_ok = (flags & FLAG_SAME) != 0u && differ == 0u;
    let same_id = flags & FLAG_ZERO;
    // kind: 0 zero block, 1 same words, 2 predictor, 3 raw
    var kind = 2u;
    var best = 0u;
    if (zero_ok) {
        kind = 0u;
    } else if ((flags & FLAG_EXACT) == 0u) {
        if (same_ok) {
            kind = 1u;
        } else {
            var best_key = 0u;
            for (var p = 0u; p < params.np; p++) {
                transform(p);
                let zm = zero_mask();
                let key = longest_run(zm) * 32u + countOneBits(zm);
                if (p == 0u || key > best_key) {
                    best = p;
                    best_key = key;
                }
            }
        }
    } else {
        var best_bits = 0u;
        for (var p = 0u; p < params.np; p++) {
            transform(p);
            let bits = code_bits(zero_mask());
            if (p == 0u || bits < best_bits) {
                best = p;
                best_bits = bits;
            }
        }
        if (same_ok && 32u <= best_bits) {
            kind = 1u;
        }
    }
    var zm = 0u;
    if (kind == 2u) {
        transform(best);
        zm = zero_mask();
        if (code_bits(zm) >= 256u) {
            kind = 3u;
        }
    }
    var w = bw_start(i * params.slot_words, params.slot_words);
    if (kind == 0u) {
        bw_put(&w, 0u, params.h);
    } else if (kind == 1u) {
        bw_put(&w, same_id, params.h);
        bw_put(&w, bswap(blk[0]), 32u);
    } else if (kind == 3u) {
        bw_put(&w, params.raw_id, params.h);
        for (var k = 0u; k < 8u; k++) {
            bw_put(&w, bswap(blk[k]), 32u);
        }
    } else {
        bw_put(&w, params.pred_id0 + best, params.h);
        for (var m = 0u; m < 16u; m++) {
            let c = code_of(m, zm);
            bw_put(&w, c.x, c.y);
        }
    }
    lens[i] = w.pos;
}
