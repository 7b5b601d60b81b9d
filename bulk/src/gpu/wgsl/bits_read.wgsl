// Bit reader of the decompress kernels (prepended to them). `payload`
// (declared by the kernel) holds stored bytes in file order, four to a
// word, little-endian: byte j is bits 8*(j%4) .. of word j/4. Stream bit k
// is bit 7 - k%8 of byte k/8 (MSB first). The host pads the payload with at
// least 8 zero bytes.

fn pl_byte(j: u32) -> u32 {
    return (payload[j >> 2u] >> ((j & 3u) * 8u)) & 0xffu;
}

// The `n` bits (0 <= n <= 32) at stream bit `pos`, as an integer.
fn read_bits(pos: u32, n: u32) -> u32 {
    if (n == 0u) {
        return 0u;
    }
    let j = pos >> 3u;
    let sh = pos & 7u;
    let hi = (pl_byte(j) << 24u) | (pl_byte(j + 1u) << 16u) | (pl_byte(j + 2u) << 8u) | pl_byte(j + 3u);
    var v = hi;
    if (sh != 0u) {
        v = (hi << sh) | (pl_byte(j + 4u) >> (8u - sh));
    }
    return v >> (32u - n);
}
