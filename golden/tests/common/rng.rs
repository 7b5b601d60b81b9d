//! A seeded xorshift generator for the randomised tests.
#![allow(dead_code)]

pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform-ish in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A uniform permutation of 0..n (Fisher-Yates).
    pub fn perm(&mut self, n: usize) -> Vec<u16> {
        let mut p: Vec<u16> = (0..n as u16).collect();
        for i in (1..n).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        p
    }
}
