//! `container-stream` and `container-random`: mutated bulk containers
//! through the streaming decoder and through random access.
//!
//! Seeds are real containers made by `bulk::compress` from small
//! pieces of the corpus (random data without one) for every algorithm
//! `open_codec` knows, with 1 to 64 blocks a chunk so there are many
//! chunks; each seed keeps a sibling, the same data at another chunk size,
//! for splicing. Mutations: [`crate::container`].
//!
//! Oracles:
//! * stream: `decompress` on one thread and on a small pool agree (same
//!   bytes, or both fail);
//! * random: if streaming succeeds, `BlockReader::open` and every
//!   `read_block` succeed and give the streamed bytes; if `open` and every
//!   `read_block` succeed, streaming succeeds (random access must validate
//!   what streaming validates); blocks past the end are refused; the
//!   format parsers take any slice of the input without panicking.

use std::io::Cursor;
use std::path::Path;

use bulk::format::{
    index_count, parse_index, Header, Trailer, FRAME_BYTES, HEADER_BYTES, INDEX_HEAD_BYTES,
    INDEX_MARKER, TRAILER_BYTES,
};
use bulk::stream::compress;
use bulk::{
    open_codec, BlockReader, BulkCodec, BulkError, CompressOptions, Engine, Summary, ALGOS,
};

use super::samples::Samples;
use crate::container::{get_u32, get_u64, mutate, Parts, Sources};
use crate::rng::{fnv1a, Rng};
use crate::{Finding, FuzzError, Input, Paths, Target};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Stream,
    Random,
}

/// Random access reads at most this many blocks of one container (the
/// first and last half of it beyond that).
const MAX_READS: u64 = 4096;

struct Seed {
    algo: usize,
    parts: Parts,
    sibling: Parts,
}

/// Every algorithm's codec, by name.
pub type Codecs = Vec<(String, Box<dyn BulkCodec>)>;

pub struct ContainerTarget {
    mode: Mode,
    codecs: Codecs,
    samples: Samples,
    seeds: Vec<Seed>,
    pool: rayon::ThreadPool,
}

/// The codecs of every algorithm, MPC with `models/default`.
pub fn open_all(models: &Path) -> Result<Codecs, FuzzError> {
    let default = models.join("default");
    ALGOS
        .iter()
        .map(|&a| {
            open_codec(a, Some(&default), None)
                .map(|c| (a.to_string(), c))
                .map_err(|e| FuzzError::Setup(format!("codec `{a}`: {e}")))
        })
        .collect()
}

type Decoded = Result<(Vec<u8>, Summary), BulkError>;

fn stream(codec: &dyn BulkCodec, data: &[u8], engine: Engine, window: usize) -> Decoded {
    let mut out = Vec::new();
    let s = bulk::decompress(codec, data, &mut out, engine, window, &|_| {})?;
    Ok((out, s))
}

fn short(e: &BulkError) -> String {
    let s = e.to_string();
    if s.len() > 160 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(157).map_or(s.len(), |c| c.0)]
        )
    } else {
        s
    }
}

/// An error message with every word that holds a digit replaced by `N`:
/// what kind of check failed, whatever the values.
pub fn error_kind(e: &BulkError) -> String {
    let msg = e.to_string();
    let words: Vec<&str> = msg
        .split_whitespace()
        .map(|w| {
            if w.bytes().any(|b| b.is_ascii_digit()) {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>();
    words.join(" ").chars().take(80).collect()
}

impl ContainerTarget {
    pub fn new(paths: &Paths, seed: u64, mode: Mode) -> Result<Self, FuzzError> {
        let codecs = open_all(&paths.models)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .map_err(|e| FuzzError::Setup(format!("thread pool: {e}")))?;
        let mut t = ContainerTarget {
            mode,
            codecs,
            samples: Samples::load(paths.corpus.as_deref(), seed),
            seeds: Vec::new(),
            pool,
        };
        let mut rng = Rng::new(seed ^ 0xC0_47A1_4E25);
        for round in 0..6 {
            for a in 0..t.codecs.len() {
                if let Some(s) = t.make_seed(&mut rng, a, round == 0) {
                    t.seeds.push(s);
                }
            }
        }
        if t.seeds.is_empty() {
            return Err(FuzzError::Setup("no seed container could be made".into()));
        }
        Ok(t)
    }

    /// The codec a container tag names.
    pub fn codec(&self, tag: &str) -> Option<&dyn BulkCodec> {
        self.codecs
            .iter()
            .find(|(n, _)| n == tag)
            .map(|(_, c)| c.as_ref())
    }

    /// A valid container of algorithm `a` and its sibling at another chunk
    /// size; `small` keeps it to a few blocks.
    fn make_seed(&self, rng: &mut Rng, a: usize, small: bool) -> Option<Seed> {
        let codec = self.codecs[a].1.as_ref();
        let bb = codec.block_bytes() as u64;
        let len = if small {
            rng.below(4 * bb)
        } else {
            match rng.below(8) {
                0 => rng.below(bb),
                1 => bb * rng.range(1, 4),
                2..=5 => rng.below(4096),
                _ => rng.below(16384),
            }
        } as usize;
        let data = self.samples.data(rng, len);
        let pick = |rng: &mut Rng| {
            if rng.bool() {
                rng.range(1, 8) as u32
            } else {
                rng.range(1, 64) as u32
            }
        };
        let c1 = pick(rng);
        let mut c2 = pick(rng);
        while c2 == c1 {
            c2 = pick(rng);
        }
        let known = rng.chance(3, 4);
        let window = rng.range(1, 4) as usize;
        let make = |c: u32| -> Option<Parts> {
            let opts = CompressOptions {
                chunk_blocks: c,
                group_blocks: None,
                engine: Engine::Single,
                window,
                original_len: known.then_some(len as u64),
            };
            let mut out = Vec::new();
            compress(codec, &data[..], &mut out, &opts, &|_| {}).ok()?;
            Parts::parse(&out)
        };
        Some(Seed {
            algo: a,
            parts: make(c1)?,
            sibling: make(c2)?,
        })
    }

    fn check_stream(&self, codec: &dyn BulkCodec, data: &[u8]) -> Result<(), Finding> {
        let window = 1 + (fnv1a(data) % 3) as usize;
        let single = stream(codec, data, Engine::Single, window);
        let parallel = self
            .pool
            .install(|| stream(codec, data, Engine::Parallel, window));
        match (&single, &parallel) {
            (Ok((a, sa)), Ok((b, sb))) => {
                if a != b || sa != sb {
                    return Err(Finding::new(
                        "engines-disagree",
                        format!(
                            "single and parallel decode give different output ({} vs {} bytes)",
                            a.len(),
                            b.len()
                        ),
                    ));
                }
                if sa.original_len != a.len() as u64 {
                    return Err(Finding::new(
                        "stream-length",
                        format!(
                            "summary says {} bytes, {} written",
                            sa.original_len,
                            a.len()
                        ),
                    ));
                }
            }
            (Err(_), Err(_)) => {}
            (Ok(_), Err(e)) => {
                return Err(Finding::new(
                    "engines-disagree",
                    format!(
                        "single-thread decode succeeds, parallel fails: {}",
                        short(e)
                    ),
                ))
            }
            (Err(e), Ok(_)) => {
                return Err(Finding::new(
                    "engines-disagree",
                    format!(
                        "parallel decode succeeds, single-thread fails: {}",
                        short(e)
                    ),
                ))
            }
        }
        Ok(())
    }

    fn check_random(&self, codec: &dyn BulkCodec, data: &[u8]) -> Result<(), Finding> {
        self.cross_check(codec, data)?;
        // after the cross-check, so that a parser panic hides nothing
        check_parsers(data);
        Ok(())
    }

    /// Streaming against random access.
    fn cross_check(&self, codec: &dyn BulkCodec, data: &[u8]) -> Result<(), Finding> {
        let streamed = stream(codec, data, Engine::Single, 2).map(|(o, _)| o);
        let mut r = match BlockReader::open(Cursor::new(data)) {
            Ok(r) => r,
            Err(e) => {
                if streamed.is_ok() {
                    return Err(Finding::new(
                        "random-rejects-valid",
                        format!(
                            "streaming decodes the container, BlockReader::open fails: {}",
                            short(&e)
                        ),
                    ));
                }
                return Ok(());
            }
        };
        let bb = r.header.block_bytes as u64;
        let blocks = r.blocks();
        let orig = r.original_len;
        if let Ok(out) = &streamed {
            if out.len() as u64 != orig {
                return Err(Finding::new(
                    "random-wrong-length",
                    format!(
                        "streaming gives {} bytes, the random-access reader {orig}",
                        out.len()
                    ),
                ));
            }
        }
        let sampled = blocks > MAX_READS;
        let ids: Box<dyn Iterator<Item = u64>> = if sampled {
            Box::new((0..MAX_READS / 2).chain(blocks - MAX_READS / 2..blocks))
        } else {
            Box::new(0..blocks)
        };
        let mut first_err: Option<(u64, BulkError)> = None;
        for i in ids {
            match r.read_block(codec, i) {
                Ok(b) => {
                    let want = bb.min(orig - i * bb) as usize;
                    if b.len() != want {
                        return Err(Finding::new(
                            "random-block-size",
                            format!("read_block({i}) gives {} bytes, expected {want}", b.len()),
                        ));
                    }
                    if let Ok(out) = &streamed {
                        let at = (i * bb) as usize;
                        if out.get(at..at + want) != Some(&b[..]) {
                            return Err(Finding::new(
                                "random-wrong-block",
                                format!(
                                    "read_block({i}) differs from the streamed bytes of block {i}"
                                ),
                            ));
                        }
                    }
                }
                Err(e) => {
                    if let Ok(_out) = &streamed {
                        return Err(Finding::new(
                            "random-rejects-valid",
                            format!(
                                "streaming decodes the container, read_block({i}) fails: {}",
                                short(&e)
                            ),
                        ));
                    }
                    if first_err.is_none() {
                        first_err = Some((i, e));
                    }
                }
            }
        }
        for i in [
            blocks,
            blocks.saturating_add(1),
            blocks.saturating_add(1000),
            u64::MAX,
        ] {
            if let Ok(b) = r.read_block(codec, i) {
                return Err(Finding::new(
                    "random-out-of-range",
                    format!(
                        "read_block({i}) of a {blocks}-block container gives {} bytes",
                        b.len()
                    ),
                ));
            }
        }
        // (a container without blocks gives random access nothing to read
        // or check, so it is left out)
        if let Err(e) = &streamed {
            if first_err.is_none() && !sampled && blocks > 0 {
                return Err(Finding::new(
                    format!("random-accepts-invalid({})", error_kind(e)),
                    format!(
                        "streaming rejects the container ({}) but BlockReader::open and all {blocks} read_block calls succeed",
                        short(e)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The public format parsers on slices of `data`: the header at several
/// lengths, the trailer, and the index head and body found both through
/// the trailer and by walking the frames (a cut container gives short
/// slices). Only panics matter here.
pub fn check_parsers(data: &[u8]) {
    let n = data.len();
    for k in [n, HEADER_BYTES, HEADER_BYTES - 1, 8, 7] {
        let _ = Header::parse(&data[..k.min(n)]);
    }
    let mut starts = Vec::new();
    if n >= TRAILER_BYTES {
        if let Ok(t) = <[u8; TRAILER_BYTES]>::try_from(&data[n - TRAILER_BYTES..]) {
            let _ = Trailer::parse(&t);
        }
        starts.push(get_u64(data, n - TRAILER_BYTES).min(n as u64) as usize);
    }
    // where a front-to-back reader meets the index marker (or the end)
    let mut pos = HEADER_BYTES.min(n);
    while pos + 4 <= n && get_u32(data, pos) != INDEX_MARKER {
        let s = get_u32(data, pos + 4) as usize;
        match pos.checked_add(FRAME_BYTES + s) {
            Some(p) if p <= n => pos = p,
            _ => break,
        }
    }
    starts.push(pos);
    for at in starts {
        let head_end = (at + INDEX_HEAD_BYTES).min(n);
        let head = &data[at..head_end];
        let body_end = n.saturating_sub(TRAILER_BYTES).max(head_end);
        let body = &data[head_end..body_end];
        if let Ok(h) = <&[u8; INDEX_HEAD_BYTES]>::try_from(head) {
            let _ = index_count(h);
        }
        let _ = parse_index(head, body);
    }
}

impl Target for ContainerTarget {
    fn next_input(&mut self, rng: &mut Rng) -> Input {
        if rng.chance(1, 8) {
            let a = rng.index(self.codecs.len());
            let small = rng.chance(1, 4);
            if let Some(s) = self.make_seed(rng, a, small) {
                if self.seeds.len() < 256 {
                    self.seeds.push(s);
                } else {
                    let i = rng.index(self.seeds.len());
                    self.seeds[i] = s;
                }
            }
        }
        let seed = &self.seeds[rng.index(self.seeds.len())];
        let foreign = &self.seeds[rng.index(self.seeds.len())];
        let tag = self.codecs[seed.algo].0.clone();
        if rng.chance(1, 64) {
            return Input {
                tag,
                data: seed.parts.to_bytes().0,
                note: "valid seed".into(),
            };
        }
        let m = mutate(
            rng,
            &Sources {
                seed: &seed.parts,
                sibling: &seed.sibling,
                foreign: &foreign.parts,
            },
        );
        Input {
            tag,
            data: m.bytes,
            note: m.ops.join("; "),
        }
    }

    fn check(&self, input: &Input) -> Result<(), Finding> {
        let Some(codec) = self.codec(&input.tag) else {
            return Err(Finding::new(
                "unreadable-input",
                format!("no codec `{}` (known: {})", input.tag, ALGOS.join(", ")),
            ));
        };
        match self.mode {
            Mode::Stream => self.check_stream(codec, &input.data),
            Mode::Random => self.check_random(codec, &input.data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_containers_split_into_parts_and_pass_both_oracles() {
        let codec = open_codec("bdi", None, None).expect("bdi opens");
        let opts = CompressOptions {
            chunk_blocks: 2,
            group_blocks: None,
            engine: Engine::Single,
            window: 1,
            original_len: Some(100),
        };
        let mut out = Vec::new();
        compress(codec.as_ref(), &[7u8; 100][..], &mut out, &opts, &|_| {}).expect("compress");
        let p = Parts::parse(&out).expect("parts");
        assert_eq!(p.chunks.len(), 2);
        assert_eq!(p.original_len(), 100);
        check_parsers(&out);
    }

    #[test]
    fn both_oracles_accept_valid_seeds() {
        let paths = Paths::default_for_workspace();
        for mode in [Mode::Stream, Mode::Random] {
            let t = ContainerTarget::new(&paths, 1, mode).expect("target");
            for s in &t.seeds {
                let input = Input {
                    tag: t.codecs[s.algo].0.clone(),
                    data: s.parts.to_bytes().0,
                    note: String::new(),
                };
                assert_eq!(t.check(&input), Ok(()), "{mode:?} {}", input.tag);
            }
        }
    }
}
