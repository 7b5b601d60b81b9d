// Bit writer of the compress kernels (prepended to them). A block's code
// goes to its slot in `slots` (declared by the kernel): stream bit k of the
// slot is bit (31 - k % 32) of word `base + k / 32`. The kernel zeroes its
// slot (`bw_start`) before writing; one thread owns one slot.

struct BitWriter {
    base: u32,
    pos: u32,
}

fn bw_start(base: u32, words: u32) -> BitWriter {
    for (var i = 0u; i < words; i++) {
        slots[base + i] = 0u;
    }
    return BitWriter(base, 0u);
}

// Append the low `n` bits of `value` (0 <= n <= 32), MSB first.
fn bw_put(w: ptr<function, BitWriter>, value: u32, n: u32) {
    if (n == 0u) {
        return;
    }
    var v = value;
    if (n < 32u) {
        v = value & ((1u << n) - 1u);
    }
    let word = (*w).base + ((*w).pos >> 5u);
    let room = 32u - ((*w).pos & 31u);
    if (n <= room) {
        slots[word] |= v << (room - n);
    } else {
        let spill = n - room;
        slots[word] |= v >> spill;
        slots[word + 1u] |= v << (32u - spill);
    }
    (*w).pos += n;
}
