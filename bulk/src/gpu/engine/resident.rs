//! Device-resident coding: blocks that are already in device memory (a
//! simulator or a training job holding its traces on the GPU) compressed
//! into chunk payloads that stay there, and decompressed back into device
//! memory, with no host copy of the data on the way.
//!
//! The chunks are the container's chunks (`docs/spec/container.md`):
//! [`GpuEngine::download_chunks`] gives each chunk's stored bytes and bit
//! count exactly as [`crate::WindowCoder::compress_window`] does for the
//! same blocks. The input is cut into parts of whole chunks as in the
//! host-memory path; each part's packed payloads, chunk bit counts and
//! byte offsets are kept in their own device buffers. Decompressing, a
//! `plan` kernel (one thread per chunk) reads each chunk's length table on
//! the device and writes the decoding segments that the host writes in
//! the host-memory path; a chunk whose table does not add up, or a segment
//! that does not decode, makes the call fail naming the first such chunk.
//!
//! Each part is one submission; a call returns when the device has
//! finished (it reads back one word per part compressing, and the
//! segment and chunk flags decompressing), so its wall time is the
//! device's time on data already resident.

use super::*;
use crate::gpu::uniform::PlanUniform;
use crate::gpu::BITS_READ;

const PLAN: &str = include_str!("../wgsl/plan_decompress.wgsl");

/// Whole blocks in device memory: an input of
/// [`GpuEngine::compress_resident`] or the output of
/// [`GpuEngine::decompress_resident`].
#[derive(Default)]
pub struct ResidentBlocks {
    buf: Option<Buf>,
    len: u64,
}

impl ResidentBlocks {
    /// No blocks (a reusable output of [`GpuEngine::decompress_resident`]).
    pub fn new() -> ResidentBlocks {
        ResidentBlocks::default()
    }

    /// Bytes of blocks held.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device buffer (its first [`len`](Self::len) bytes are the
    /// blocks), for kernels of the caller's own.
    pub fn buffer(&self) -> Option<&wgpu::Buffer> {
        self.buf.as_ref().map(|b| &b.buf)
    }
}

/// One part of a resident container: whole chunks, their payloads back to
/// back (each padded to a byte) in `packed`.
struct ResidentPart {
    chunks: usize,
    blocks: usize,
    packed: Option<Buf>,
    chunk_bits: Option<Buf>,
    chunk_byte: Option<Buf>,
    /// Stored bytes of the part's chunks (known when the call returns).
    bytes: u64,
}

/// Chunks compressed on the device and kept there, the output of
/// [`GpuEngine::compress_resident`]. Reusing one across calls reuses its
/// device buffers.
#[derive(Default)]
pub struct ResidentChunks {
    header: Option<Header>,
    blocks: u64,
    parts: Vec<ResidentPart>,
    used: usize,
}

impl ResidentChunks {
    /// No chunks (a reusable output of [`GpuEngine::compress_resident`]).
    pub fn new() -> ResidentChunks {
        ResidentChunks::default()
    }

    /// Chunks held.
    pub fn chunks(&self) -> usize {
        self.parts[..self.used].iter().map(|p| p.chunks).sum()
    }

    /// Blocks coded.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Stored bytes of all chunks (each chunk's payload padded to a byte;
    /// a container adds its header, index and trailer).
    pub fn stored_bytes(&self) -> u64 {
        self.parts[..self.used].iter().map(|p| p.bytes).sum()
    }

    /// The header the chunks were coded with.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }
}

/// Device buffers of the resident calls, reused across calls.
pub(super) struct ResidentScratch {
    comp_params: wgpu::Buffer,
    pack_params: wgpu::Buffer,
    scan_params: wgpu::Buffer,
    dec_params: wgpu::Buffer,
    plan_params: wgpu::Buffer,
    slots: Option<Buf>,
    lens: Option<Buf>,
    offs: Option<Buf>,
    segs: Option<Buf>,
    status: Option<Buf>,
    bad: Option<Buf>,
    flags: Option<Buf>,
    flags_rb: Option<Buf>,
    plan: Option<wgpu::ComputePipeline>,
}

impl ResidentScratch {
    pub(super) fn new(gpu: &Gpu) -> ResidentScratch {
        ResidentScratch {
            comp_params: gpu.uniform("resident compress params", &[0; PARAMS_BYTES]),
            pack_params: gpu.uniform(
                "resident pack params",
                bytemuck::bytes_of(&PackUniform::default()),
            ),
            scan_params: gpu.uniform(
                "resident scan params",
                bytemuck::bytes_of(&ScanUniform::default()),
            ),
            dec_params: gpu.uniform("resident decompress params", &[0; PARAMS_BYTES]),
            plan_params: gpu.uniform(
                "resident plan params",
                bytemuck::bytes_of(&PlanUniform::default()),
            ),
            slots: None,
            lens: None,
            offs: None,
            segs: None,
            status: None,
            bad: None,
            flags: None,
            flags_rb: None,
            plan: None,
        }
    }
}

/// Segments of a part of `chunks` chunks holding `blocks` blocks, and the
/// segments of a whole chunk.
fn segments(header: &Header, chunks: usize, blocks: usize) -> (usize, usize) {
    let cb = header.chunk_blocks as usize;
    match header.group_blocks() {
        0 => (chunks, 1),
        g => {
            let fields = cb.div_ceil(g);
            let last = blocks - (chunks - 1) * cb;
            ((chunks - 1) * fields + last.div_ceil(g), fields)
        }
    }
}

impl GpuEngine {
    /// Copy `data` (whole blocks of this engine's algorithm) into device
    /// memory.
    pub fn upload_blocks(&self, data: &[u8]) -> Result<ResidentBlocks, BulkError> {
        let bb = self.block_bytes();
        if !data.len().is_multiple_of(bb) {
            return Err(BulkError::Config(format!(
                "{}: {} bytes are not whole {bb}-byte blocks",
                self.algo.name,
                data.len()
            )));
        }
        let gpu = &self.gpu;
        let len = data.len() as u64;
        let mut buf = None;
        ensure(gpu, &mut buf, "resident blocks", len, Kind::Resident)?;
        let staging = gpu.upload_staging("resident upload", len);
        let pieces: Vec<(usize, &[u8])> = data
            .chunks(1 << 20)
            .enumerate()
            .map(|(i, p)| (i << 20, p))
            .collect();
        gpu.stage(&staging, len, &pieces)?;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&staging, 0, get(&buf), 0, len.next_multiple_of(4).max(4));
        gpu.submit_wait(enc)?;
        Ok(ResidentBlocks { buf, len })
    }

    /// Take `len` bytes of blocks at the start of a device buffer of the
    /// caller's (made on this engine's device, with the `STORAGE` and
    /// `COPY_SRC` usages).
    pub fn adopt_blocks(
        &self,
        buffer: wgpu::Buffer,
        len: u64,
    ) -> Result<ResidentBlocks, BulkError> {
        let bb = self.block_bytes() as u64;
        let need = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        if !buffer.usage().contains(need) {
            return Err(BulkError::Config(
                "a resident block buffer needs the STORAGE and COPY_SRC usages".into(),
            ));
        }
        if !len.is_multiple_of(bb) || len > buffer.size() {
            return Err(BulkError::Config(format!(
                "{}: {len} bytes of a {}-byte buffer are not whole {bb}-byte blocks inside it",
                self.algo.name,
                buffer.size()
            )));
        }
        let cap = buffer.size();
        Ok(ResidentBlocks {
            buf: Some(Buf { buf: buffer, cap }),
            len,
        })
    }

    /// Copy resident blocks back to host memory.
    pub fn download_blocks(&self, blocks: &ResidentBlocks) -> Result<Vec<u8>, BulkError> {
        match &blocks.buf {
            Some(b) if blocks.len > 0 => self.gpu.read(&b.buf, blocks.len),
            _ => Ok(Vec::new()),
        }
    }

    /// Chunks of `chunk_in` input bytes per part: about the engine's part
    /// size, and a multiple of whole chunks whose input and output offsets
    /// the device can bind.
    fn resident_parts(&self, chunks: usize, chunk_in: usize) -> Vec<Range<usize>> {
        let align = (self.gpu.limits.min_storage_buffer_offset_alignment as usize).max(4);
        // chunks per part must make part starts multiples of `align`
        let step = align / gcd(align, chunk_in.max(1));
        let per = (self.part_bytes.load(Ordering::Relaxed) / chunk_in.max(1))
            .max(1)
            .next_multiple_of(step);
        parts(chunks, chunk_in, per * chunk_in)
    }

    fn scratch(&self) -> Result<std::sync::MutexGuard<'_, ResidentScratch>, BulkError> {
        self.resident
            .lock()
            .map_err(|_| BulkError::Gpu("device buffers poisoned by an earlier failure".into()))
    }

    /// Compress the blocks of `input` into chunks of `header` kept on the
    /// device, in `out` (its buffers reused). `header` is the container
    /// header the host-memory path would write for this engine's codec
    /// ([`crate::stream::header_for`]).
    pub fn compress_resident(
        &self,
        header: &Header,
        input: &ResidentBlocks,
        out: &mut ResidentChunks,
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        if header.block_bytes as usize != bb || header.chunk_blocks == 0 {
            return Err(BulkError::Config(format!(
                "{}: the header's block size {} or chunk size {} does not fit {bb}-byte blocks",
                self.algo.name, header.block_bytes, header.chunk_blocks
            )));
        }
        out.header = Some(header.clone());
        out.blocks = input.len / bb as u64;
        out.used = 0;
        let Some(inbuf) = input.buf.as_ref().filter(|_| input.len > 0) else {
            return Ok(());
        };
        let cb = header.chunk_blocks as usize;
        let chunk_in = cb * bb;
        let total = input.len as usize;
        let nchunks = total.div_ceil(chunk_in);
        let ranges = self.resident_parts(nchunks, chunk_in);
        let width = header.len_width as u64;
        let sw = self.algo.slot_words as u64;
        let chunk_max = (cb as u64 * (self.max_bits as u64 + width)).div_ceil(8) + 4;
        let mut s = self.scratch()?;
        let s = &mut *s;
        let most = ranges.iter().map(|r| r.len()).max().unwrap_or(0) * cb;
        ensure(
            gpu,
            &mut s.slots,
            "resident slots",
            4 * sw * most as u64,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.lens,
            "resident lens",
            4 * most as u64,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.offs,
            "resident offs",
            4 * most as u64,
            Kind::Storage,
        )?;
        // one word a part: its stored bytes
        let nparts = ranges.len() as u64;
        ensure(
            gpu,
            &mut s.flags,
            "resident totals",
            4 * nparts,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.flags_rb,
            "resident totals readback",
            4 * nparts,
            Kind::Readback,
        )?;
        for (p, r) in ranges.iter().enumerate() {
            let lo = r.start * chunk_in;
            let hi = (r.end * chunk_in).min(total);
            let n = (hi - lo) / bb;
            let nch = r.len();
            let out_bytes = (nch as u64 * chunk_max + 8).next_multiple_of(4);
            if out_bytes * 8 > u32::MAX as u64 {
                return Err(BulkError::Gpu(format!(
                    "{nch} chunks of {cb} blocks: their bit positions would not fit 32 bits; use smaller chunks"
                )));
            }
            if out.parts.len() <= p {
                out.parts.push(ResidentPart {
                    chunks: 0,
                    blocks: 0,
                    packed: None,
                    chunk_bits: None,
                    chunk_byte: None,
                    bytes: 0,
                });
            }
            let part = &mut out.parts[p];
            part.chunks = nch;
            part.blocks = n;
            ensure(
                gpu,
                &mut part.packed,
                "resident packed",
                out_bytes,
                Kind::Storage,
            )?;
            ensure(
                gpu,
                &mut part.chunk_bits,
                "resident chunk bits",
                4 * nch as u64,
                Kind::Storage,
            )?;
            let cbytes = 4 * (nch as u64 + 1);
            ensure(
                gpu,
                &mut part.chunk_byte,
                "resident chunk bytes",
                cbytes,
                Kind::Storage,
            )?;
            self.write_compress_params(
                [&s.comp_params, &s.pack_params, &s.scan_params],
                header,
                n,
                nch,
            );
            let mut k = gpu.device.create_command_encoder(&Default::default());
            self.encode_compress(
                &mut k,
                &CompressBinds {
                    params: [&s.comp_params, &s.pack_params, &s.scan_params],
                    input: wgpu::BufferBinding {
                        buffer: &inbuf.buf,
                        offset: lo as u64,
                        size: wgpu::BufferSize::new((hi - lo).next_multiple_of(4) as u64),
                    },
                    slots: get(&s.slots),
                    lens: get(&s.lens),
                    offs: get(&s.offs),
                    chunk_bits: get(&part.chunk_bits),
                    chunk_byte: get(&part.chunk_byte),
                    out: get(&part.packed),
                },
                n,
                nch,
                out_bytes,
            );
            k.copy_buffer_to_buffer(
                get(&part.chunk_byte),
                4 * nch as u64,
                get(&s.flags),
                4 * p as u64,
                4,
            );
            gpu.queue.submit([k.finish()]);
        }
        let mut k = gpu.device.create_command_encoder(&Default::default());
        k.copy_buffer_to_buffer(get(&s.flags), 0, get(&s.flags_rb), 0, 4 * nparts);
        gpu.wait(gpu.queue.submit([k.finish()]))?;
        let mut host = Vec::new();
        gpu.read_mapped(get(&s.flags_rb), 4 * nparts, &mut host)?;
        for (part, b) in out.parts.iter_mut().zip(words_le(&host)) {
            part.bytes = b as u64;
        }
        out.used = ranges.len();
        Ok(())
    }

    /// Decompress resident chunks into `out` (its buffer reused when large
    /// enough). Fails naming the first chunk that does not decode.
    pub fn decompress_resident(
        &self,
        chunks: &ResidentChunks,
        out: &mut ResidentBlocks,
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        let Some(header) = chunks.header.as_ref() else {
            out.len = 0;
            return Ok(());
        };
        if header.block_bytes as usize != bb {
            return Err(BulkError::Config(format!(
                "{}: chunks of {}-byte blocks given to a {bb}-byte engine",
                self.algo.name, header.block_bytes
            )));
        }
        let len = chunks.blocks * bb as u64;
        ensure(gpu, &mut out.buf, "resident blocks", len, Kind::Resident)?;
        out.len = len;
        let parts = &chunks.parts[..chunks.used];
        if parts.is_empty() {
            return Ok(());
        }
        let cb = header.chunk_blocks as usize;
        let group = header.group_blocks();
        let mut s = self.scratch()?;
        let s = &mut *s;
        if s.plan.is_none() {
            s.plan = Some(gpu.pipeline("plan", &format!("{BITS_READ}\n{PLAN}"), "plan")?);
        }
        let plan = s
            .plan
            .as_ref()
            .ok_or_else(|| BulkError::Gpu("plan kernel".into()))?;
        let counts: Vec<(usize, usize)> = parts
            .iter()
            .map(|p| segments(header, p.chunks, p.blocks))
            .collect();
        let most_segs = counts.iter().map(|c| c.0).max().unwrap_or(0) as u64;
        let most_chunks = parts.iter().map(|p| p.chunks).max().unwrap_or(0) as u64;
        // the flags: every part's segment statuses, then its chunk flags
        let flag_words: u64 = parts
            .iter()
            .zip(&counts)
            .map(|(p, c)| (c.0 + p.chunks) as u64)
            .sum();
        ensure(
            gpu,
            &mut s.segs,
            "resident segments",
            16 * most_segs,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.status,
            "resident status",
            4 * most_segs,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.bad,
            "resident chunk flags",
            4 * most_chunks,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.flags,
            "resident flags",
            4 * flag_words,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut s.flags_rb,
            "resident flags readback",
            4 * flag_words,
            Kind::Readback,
        )?;
        let outbuf = get(&out.buf);
        let mut at = 0u64;
        let mut block0 = 0u64;
        for (part, &(ns, fields)) in parts.iter().zip(&counts) {
            let nch = part.chunks;
            let pu = PlanUniform {
                chunks: nch as u32,
                chunk_blocks: cb as u32,
                n: part.blocks as u32,
                group: group as u32,
                width: header.len_width as u32,
                max_bits: self.max_bits as u32,
                fields: fields as u32,
                pad7: 0,
            };
            gpu.queue
                .write_buffer(&s.plan_params, 0, bytemuck::bytes_of(&pu));
            self.params(&s.dec_params, ns as u32);
            let mut k = gpu.device.create_command_encoder(&Default::default());
            let g = gpu.bind(
                plan,
                &[
                    &s.plan_params,
                    get(&part.packed),
                    get(&part.chunk_bits),
                    get(&part.chunk_byte),
                    get(&s.segs),
                    get(&s.bad),
                ],
            );
            Gpu::dispatch(&mut k, plan, &g, nch as u64);
            let bytes = (part.blocks * bb) as u64;
            let g = gpu.bind_resources(
                &self.decompress,
                &[
                    s.dec_params.as_entire_binding(),
                    self.tables.as_entire_binding(),
                    get(&part.packed).as_entire_binding(),
                    get(&s.segs).as_entire_binding(),
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: outbuf,
                        offset: block0 * bb as u64,
                        size: wgpu::BufferSize::new(bytes.next_multiple_of(4)),
                    }),
                    get(&s.status).as_entire_binding(),
                ],
            );
            Gpu::dispatch(&mut k, &self.decompress, &g, ns as u64);
            k.copy_buffer_to_buffer(get(&s.status), 0, get(&s.flags), 4 * at, 4 * ns as u64);
            at += ns as u64;
            k.copy_buffer_to_buffer(get(&s.bad), 0, get(&s.flags), 4 * at, 4 * nch as u64);
            at += nch as u64;
            block0 += part.blocks as u64;
            gpu.queue.submit([k.finish()]);
        }
        let mut k = gpu.device.create_command_encoder(&Default::default());
        k.copy_buffer_to_buffer(get(&s.flags), 0, get(&s.flags_rb), 0, 4 * flag_words);
        gpu.wait(gpu.queue.submit([k.finish()]))?;
        let mut host = Vec::new();
        gpu.read_mapped(get(&s.flags_rb), 4 * flag_words, &mut host)?;
        let flags: Vec<u32> = words_le(&host).collect();
        // the first chunk with a bad table or a segment that did not decode
        let mut at = 0usize;
        let mut chunk0 = 0usize;
        for (part, &(ns, fields)) in parts.iter().zip(&counts) {
            let status = &flags[at..at + ns];
            let bad = &flags[at + ns..at + ns + part.chunks];
            for (c, &flag) in bad.iter().enumerate() {
                let segs = if group == 0 {
                    c..c + 1
                } else {
                    (c * fields).min(ns)..((c + 1) * fields).min(ns)
                };
                if flag != 0 || status[segs].iter().any(|&x| x != 0) {
                    return Err(BulkError::ChunkCorrupt {
                        chunk: (chunk0 + c) as u64,
                        what: format!(
                            "{}: the device-resident chunk does not decode (its length table \
                             or a block's code is malformed)",
                            self.algo.name
                        ),
                    });
                }
            }
            at += ns + part.chunks;
            chunk0 += part.chunks;
        }
        Ok(())
    }

    /// Copy chunks (each one's stored bytes and bit count, as a
    /// container holds them, coded with `header`) holding `blocks` blocks
    /// into device memory, for [`decompress_resident`](Self::decompress_resident).
    /// Their contents are checked there.
    pub fn upload_chunks(
        &self,
        header: &Header,
        chunks: &[(Vec<u8>, u32)],
        blocks: u64,
        out: &mut ResidentChunks,
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        let cb = header.chunk_blocks as u64;
        if header.block_bytes as usize != bb || cb == 0 {
            return Err(BulkError::Config(format!(
                "{}: the header's block size {} or chunk size {} does not fit {bb}-byte blocks",
                self.algo.name, header.block_bytes, header.chunk_blocks
            )));
        }
        if blocks.div_ceil(cb) != chunks.len() as u64 {
            return Err(BulkError::Config(format!(
                "{} chunks given for {blocks} blocks in chunks of {cb}",
                chunks.len()
            )));
        }
        for (k, (stored, bits)) in chunks.iter().enumerate() {
            if stored.len() as u64 != (*bits as u64).div_ceil(8) {
                return Err(BulkError::ChunkCorrupt {
                    chunk: k as u64,
                    what: format!("{} stored bytes for {bits} bits", stored.len()),
                });
            }
        }
        out.header = Some(header.clone());
        out.blocks = blocks;
        out.used = 0;
        let chunk_in = cb as usize * bb;
        let ranges = self.resident_parts(chunks.len(), chunk_in);
        for (p, r) in ranges.iter().enumerate() {
            let first_block = r.start as u64 * cb;
            let n = ((r.end as u64 * cb).min(blocks) - first_block) as usize;
            let mut packed = Vec::new();
            let mut bits = Vec::with_capacity(r.len());
            let mut byte = Vec::with_capacity(r.len() + 1);
            for (stored, b) in &chunks[r.clone()] {
                byte.push(packed.len() as u32);
                bits.push(*b);
                packed.extend_from_slice(stored);
            }
            let total = packed.len() as u64;
            if total * 8 + 64 > u32::MAX as u64 {
                return Err(BulkError::Gpu(format!(
                    "chunks {}..{}: their bit positions would not fit 32 bits; use smaller chunks",
                    r.start, r.end
                )));
            }
            byte.push(total as u32);
            // zeros after the last chunk: the bit reader peeks a few bytes ahead
            packed.resize((packed.len() + 8).next_multiple_of(4), 0);
            let words: Vec<u32> = words_le(&packed).collect();
            let part = ResidentPart {
                chunks: r.len(),
                blocks: n,
                packed: Some(Buf {
                    cap: 4 * words.len() as u64,
                    buf: gpu.storage_init("resident packed", &words),
                }),
                chunk_bits: Some(Buf {
                    cap: 4 * bits.len() as u64,
                    buf: gpu.storage_init("resident chunk bits", &bits),
                }),
                chunk_byte: Some(Buf {
                    cap: 4 * byte.len() as u64,
                    buf: gpu.storage_init("resident chunk bytes", &byte),
                }),
                bytes: total,
            };
            if out.parts.len() <= p {
                out.parts.push(part);
            } else {
                out.parts[p] = part;
            }
        }
        out.used = ranges.len();
        Ok(())
    }

    /// Each resident chunk's stored bytes and bit count, copied to host
    /// memory: what [`crate::WindowCoder::compress_window`] gives for the
    /// same blocks.
    pub fn download_chunks(
        &self,
        chunks: &ResidentChunks,
    ) -> Result<Vec<(Vec<u8>, u32)>, BulkError> {
        let gpu = &self.gpu;
        let mut out = Vec::with_capacity(chunks.chunks());
        for part in &chunks.parts[..chunks.used] {
            let nch = part.chunks;
            let bits = gpu.read_words(get(&part.chunk_bits), nch)?;
            let byte = gpu.read_words(get(&part.chunk_byte), nch + 1)?;
            let packed = gpu.read(get(&part.packed), part.bytes)?;
            for c in 0..nch {
                let lo = byte[c] as usize;
                let hi = lo + (bits[c] as usize).div_ceil(8);
                let stored = packed.get(lo..hi).ok_or_else(|| {
                    BulkError::Gpu(format!("resident chunk {c}: device offsets out of range"))
                })?;
                out.push((stored.to_vec(), bits[c]));
            }
        }
        Ok(out)
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
