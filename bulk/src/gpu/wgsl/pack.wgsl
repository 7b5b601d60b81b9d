// Packing the coded blocks of a window into chunk payloads
// (docs/spec/container.md, "Chunk payload"), after the compress kernel
// has left each block's code in its slot and its length in `lens`.
//
// chunk_scan: one workgroup per chunk: offs[i] = bit offset of block i in
//   its chunk's payload (table included), chunk_bits[k] = the chunk's bits.
// window_scan: one thread: chunk_byte[k] = byte offset of chunk k in the
//   window's output (payloads back to back, each padded to a byte),
//   chunk_byte[chunks] = total bytes.
// scatter: one thread per block: ORs its code, and its group's table
//   field when it starts a group, into `out` at its place. `out` words hold
//   stream bytes in memory order (byte-swapped big-endian words), so the
//   host reads the payload bytes as they are.

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
@group(0) @binding(2) var<storage, read_write> offs: array<u32>;
@group(0) @binding(3) var<storage, read_write> chunk_bits: array<u32>;

var<workgroup> partial: array<u32, 64>;

fn blocks_in(k: u32) -> u32 {
    return min(params.chunk_blocks, params.n - k * params.chunk_blocks);
}

fn table_bits(blocks: u32) -> u32 {
    if (params.group == 0u) {
        return 0u;
    }
    return ((blocks + params.group - 1u) / params.group) * params.width;
}

@compute @workgroup_size(64)
fn chunk_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
    let k = wid.x + wid.y * nwg.x;
    if (k >= params.chunks) {
        return;
    }
    let first = k * params.chunk_blocks;
    let blocks = blocks_in(k);
    let per = (blocks + 63u) / 64u;
    let lo = min(t * per, blocks);
    let hi = min(lo + per, blocks);
    var sum = 0u;
    for (var i = lo; i < hi; i++) {
        sum += lens[first + i];
    }
    partial[t] = sum;
    workgroupBarrier();
    if (t == 0u) {
        var acc = table_bits(blocks);
        for (var j = 0u; j < 64u; j++) {
            let v = partial[j];
            partial[j] = acc;
            acc += v;
        }
        chunk_bits[k] = acc;
    }
    workgroupBarrier();
    var at = partial[t];
    for (var i = lo; i < hi; i++) {
        offs[first + i] = at;
        at += lens[first + i];
    }
}
