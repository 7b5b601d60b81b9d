// See pack.wgsl: window_scan and scatter.

struct Params {
    n: u32,            // blocks in the part
    chunk_blocks: u32, // blocks per chunk
    chunks: u32,       // chunks in the part
    slot_words: u32,   // words in one compress slot
    group: u32,        // blocks per table field; 0: no table
    width: u32,        // table field width W
    pad6: u32,
    pad7: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> lens: array<u32>;
@group(0) @binding(2) var<storage, read> offs: array<u32>;
@group(0) @binding(3) var<storage, read> chunk_bits: array<u32>;
@group(0) @binding(4) var<storage, read> slots: array<u32>;
@group(0) @binding(5) var<storage, read> chunk_byte: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<atomic<u32>>;

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

// OR the low `n` bits of `v` (1 <= n <= 32) at stream bit `pos` of `out`.
fn or_bits(pos: u32, v: u32, n: u32) {
    var x = v;
    if (n < 32u) {
        x = v & ((1u << n) - 1u);
    }
    let word = pos >> 5u;
    let room = 32u - (pos & 31u);
    if (n <= room) {
        let w = x << (room - n);
        if (w != 0u) {
            atomicOr(&out[word], bswap(w));
        }
    } else {
        let spill = n - room;
        let a = x >> spill;
        let b = x << (32u - spill);
        if (a != 0u) {
            atomicOr(&out[word], bswap(a));
        }
        if (b != 0u) {
            atomicOr(&out[word + 1u], bswap(b));
        }
    }
}

@compute @workgroup_size(64)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) {
        return;
    }
    let k = i / params.chunk_blocks;
    let first = k * params.chunk_blocks;
    let base = chunk_byte[k] * 8u;
    let pos = base + offs[i];
    let len = lens[i];
    let slot = i * params.slot_words;
    var done = 0u;
    for (var w = 0u; done < len; w++) {
        let n = min(32u, len - done);
        or_bits(pos + done, slots[slot + w] >> (32u - n), n);
        done += n;
    }
    let g = params.group;
    if (g != 0u && (i - first) % g == 0u) {
        let j = (i - first) / g;
        let blocks = min(params.chunk_blocks, params.n - first);
        var end = chunk_bits[k];
        if (i + g < first + blocks) {
            end = offs[i + g];
        }
        or_bits(base + j * params.width, end - offs[i], params.width);
    }
}
