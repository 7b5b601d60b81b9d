//! `mpc ratio --online K` (the online protocol of
//! `docs/spec/program-slots.md`) and `mpc program` (train K slots from a
//! sample of one application and write the image a driver loads).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use golden::blocks::read_blocks_and_len;
use golden::mpc::program::registers::route_word_count;
use golden::mpc::program::{
    image_writes, online_protocol, train_slots, Form, OnlineOptions, ProgrammedSet, SlotImage,
    FORMS,
};
use golden::mpc::{ModelSet, BLOCK_BYTES};
use rayon::prelude::*;

use crate::atomic_output::Output;

/// The form `mpc` uses when `--form` is not given.
pub const DEFAULT_FORM: &str = "stride-colpart";

/// The form named `name`, or an error listing the forms.
pub fn form(name: &str) -> Result<Form> {
    Form::by_name(name).with_context(|| {
        format!(
            "--form {name:?} is not a slot form; the forms are {}",
            FORMS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
        )
    })
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// One file's online-protocol figures.
struct FileResult {
    file: PathBuf,
    blocks: usize,
    train_blocks: usize,
    test_blocks: usize,
    hard_wired_bits: u64,
    programmed_bits: u64,
    original_bits: u64,
    loaded: usize,
    train_seconds: f64,
}

fn ratio(orig: u64, comp: u64) -> f64 {
    if comp == 0 {
        0.0
    } else {
        orig as f64 / comp as f64
    }
}

/// `mpc ratio --online K`.
pub fn ratio_online(
    model: &Path,
    k: usize,
    form_name: &str,
    json: bool,
    verify: bool,
    pad: bool,
    files: &[PathBuf],
) -> Result<()> {
    let set = ModelSet::load(model)?;
    let form = form(form_name)?;
    let opts = OnlineOptions::new(form, k);
    // reject a bad K before reading any file
    train_slots(&set, &[], &opts).context("--online")?;
    let results: Vec<FileResult> = files
        .par_iter()
        .map(|f| -> Result<FileResult> {
            let (blocks, _) = read_blocks_and_len::<BLOCK_BYTES>(f, pad)?;
            let q = blocks.len() / 4;
            let r = online_protocol(&set, &blocks, &opts)?;
            let image = &r.image;
            if verify {
                let unit = ProgrammedSet::new(&set, image)?;
                let codec = unit.fast_codec();
                for (i, b) in blocks[q..].iter().enumerate() {
                    let c = codec.compress(b);
                    let d = codec
                        .decompress(c.as_bytes(), c.len as usize)
                        .with_context(|| {
                            format!("{}: block {} does not decode", f.display(), q + i)
                        })?;
                    if &d != b {
                        bail!("{}: block {} does not round-trip", f.display(), q + i);
                    }
                }
            }
            Ok(FileResult {
                file: f.clone(),
                blocks: blocks.len(),
                train_blocks: r.train_blocks,
                test_blocks: r.test_blocks,
                hard_wired_bits: r.hard_wired_bits,
                programmed_bits: r.programmed_bits,
                original_bits: r.original_bits(),
                loaded: image.loaded(),
                train_seconds: r.train_seconds,
            })
        })
        .collect::<Result<_>>()?;
    let orig: u64 = results.iter().map(|r| r.original_bits).sum();
    let hw: u64 = results.iter().map(|r| r.hard_wired_bits).sum();
    let pr: u64 = results.iter().map(|r| r.programmed_bits).sum();
    let train_bytes: u64 = results
        .iter()
        .map(|r| (r.train_blocks * BLOCK_BYTES) as u64)
        .sum();
    let train_s: f64 = results.iter().map(|r| r.train_seconds).sum();
    let per_mib = if train_bytes == 0 {
        0.0
    } else {
        train_s / (train_bytes as f64 / (1u64 << 20) as f64)
    };
    let mut out = std::io::stdout().lock();
    if json {
        let files: Vec<String> = results
            .iter()
            .map(|r| {
                format!(
                    "{{\"file\":{},\"blocks\":{},\"train_blocks\":{},\"test_blocks\":{},\
                     \"slots_loaded\":{},\"hard_wired\":{:.6},\"programmed\":{:.6},\
                     \"hard_wired_bits\":{},\"programmed_bits\":{},\"original_bits\":{},\
                     \"train_seconds\":{:.6}}}",
                    json_str(&r.file.display().to_string()),
                    r.blocks,
                    r.train_blocks,
                    r.test_blocks,
                    r.loaded,
                    ratio(r.original_bits, r.hard_wired_bits),
                    ratio(r.original_bits, r.programmed_bits),
                    r.hard_wired_bits,
                    r.programmed_bits,
                    r.original_bits,
                    r.train_seconds
                )
            })
            .collect();
        writeln!(
            out,
            "{{\"model\":{},\"form\":{},\"k\":{k},\"files\":[{}],\"overall\":{{\"hard_wired\":{:.6},\
             \"programmed\":{:.6},\"hard_wired_bits\":{hw},\"programmed_bits\":{pr},\
             \"original_bits\":{orig}}},\"train_seconds_per_mib\":{per_mib:.6}}}",
            json_str(&set.name),
            json_str(form.name),
            files.join(","),
            ratio(orig, hw),
            ratio(orig, pr),
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "model set `{}` + {k} slot{} of form {} (online: trained on each file's first quarter, \
         ratios of the remaining three quarters)",
        set.name,
        if k == 1 { "" } else { "s" },
        form.name
    )?;
    writeln!(
        out,
        "{:>10}  {:>10}  {:>8}  {:>9}  file",
        "hard-wired", "programmed", "gain", "train ms"
    )?;
    for r in &results {
        let (h, p) = (
            ratio(r.original_bits, r.hard_wired_bits),
            ratio(r.original_bits, r.programmed_bits),
        );
        writeln!(
            out,
            "{h:>10.3}  {p:>10.3}  {:>+7.2}%  {:>9.1}  {}",
            100.0 * (p / h - 1.0),
            1e3 * r.train_seconds,
            r.file.display()
        )?;
    }
    let (h, p) = (ratio(orig, hw), ratio(orig, pr));
    writeln!(
        out,
        "{h:>10.3}  {p:>10.3}  {:>+7.2}%  {:>9.1}  overall ({} files; training {:.3} s per MiB of sample)",
        100.0 * (p / h - 1.0),
        1e3 * train_s,
        results.len(),
        per_mib
    )?;
    if verify {
        writeln!(
            out,
            "verified: every coded block of {} file{} decompresses to its input",
            results.len(),
            if results.len() == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

/// Arguments of `mpc program`.
pub struct ProgramArgs<'a> {
    pub model: &'a Path,
    pub form: &'a str,
    pub slots: usize,
    pub sample_bytes: u64,
    pub spread: bool,
    /// The image file to write.
    pub output: Option<&'a Path>,
    /// The register writes file to write.
    pub registers: Option<&'a Path>,
    /// The epoch of the register writes.
    pub epoch: u8,
    pub force: bool,
    pub file: &'a Path,
}

/// Bytes of a page of the spread sample.
pub const PAGE_BYTES: usize = 4096;

/// The sample: the first `bytes` of the blocks, or (spread) pages of 4 KiB
/// evenly spaced over the file, `bytes` in all.
pub fn sample(blocks: &[[u8; BLOCK_BYTES]], bytes: u64, spread: bool) -> Vec<[u8; BLOCK_BYTES]> {
    let want = ((bytes as usize) / BLOCK_BYTES).min(blocks.len());
    if !spread || want == blocks.len() {
        return blocks[..want].to_vec();
    }
    let per = PAGE_BYTES / BLOCK_BYTES;
    let pages = blocks.len().div_ceil(per);
    let take = want.div_ceil(per).max(1);
    let mut out = Vec::with_capacity(take * per);
    for k in 0..take {
        let p = k * pages / take;
        let end = ((p + 1) * per).min(blocks.len());
        out.extend_from_slice(&blocks[p * per..end]);
    }
    out
}

/// The register writes of an image as text: one `ADDRESS VALUE` line of
/// hex words (`0x%03x 0x%08x`) per write, in the order given (the `COMMIT`
/// write last).
pub fn registers_text(writes: &[golden::mpc::program::RegisterWrite]) -> String {
    writes
        .iter()
        .map(|w| format!("0x{:03x} 0x{:08x}\n", w.addr, w.value))
        .collect()
}

/// `mpc program`.
pub fn program(a: &ProgramArgs<'_>) -> Result<()> {
    let set = ModelSet::load(a.model)?;
    let form = form(a.form)?;
    if a.output.is_none() && a.registers.is_none() {
        bail!("nothing to write: give --output IMAGE, --registers FILE or both");
    }
    if a.registers.is_some() && route_word_count(form).is_none() {
        bail!(
            "--registers: form {} has no register map (the any-base forms are not built in RTL)",
            form.name
        );
    }
    if let (Some(o), Some(r)) = (a.output, a.registers) {
        if o == r {
            bail!(
                "--output and --registers both name {}; give two files",
                o.display()
            );
        }
    }
    let opts = OnlineOptions::new(form, a.slots);
    // reject a bad K before reading the file
    train_slots(&set, &[], &opts).context("--slots")?;
    let (blocks, _) = read_blocks_and_len::<BLOCK_BYTES>(a.file, true)?;
    let s = sample(&blocks, a.sample_bytes, a.spread);
    let t = Instant::now();
    let image: SlotImage = train_slots(&set, &s, &opts).context("--slots")?;
    let secs = t.elapsed().as_secs_f64();
    let bytes = image.to_bytes();
    // what is written must load back and fit the set
    let back = SlotImage::load(&bytes).context("the written image does not load back")?;
    ProgrammedSet::new(&set, &back)?;
    let text = match a.registers {
        Some(_) => Some(registers_text(
            &image_writes(&set, &back, a.epoch).context("--registers")?,
        )),
        None => None,
    };
    // both outputs prepared (and refused) before either is written
    let outputs: Vec<(&Path, Output, &[u8])> = [
        a.output.map(|p| (p, bytes.as_slice())),
        a.registers
            .zip(text.as_deref())
            .map(|(p, t)| (p, t.as_bytes())),
    ]
    .into_iter()
    .flatten()
    .map(|(p, data)| Ok((p, Output::create(p, a.force, Some(a.file))?, data)))
    .collect::<Result<_>>()?;
    for (_, out, data) in &outputs {
        let mut w = out.writer()?;
        w.write_all(data)?;
        w.flush()?;
    }
    for (_, out, _) in outputs {
        out.commit()?;
    }
    let mib = (s.len() * BLOCK_BYTES) as f64 / (1u64 << 20) as f64;
    let written: Vec<String> = [
        a.output
            .map(|p| format!("{} ({} bytes)", p.display(), bytes.len())),
        a.registers.zip(text.as_ref()).map(|(p, t)| {
            format!(
                "{} ({} register writes, epoch {})",
                p.display(),
                t.lines().count(),
                a.epoch
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    errln!(
        "wrote {} (form {}, {} of {} slots loaded, for `{}`); trained on {:.3} MiB \
         in {:.3} s ({:.3} s per MiB)",
        written.join(" and "),
        form.name,
        image.loaded(),
        a.slots,
        set.name,
        mib,
        secs,
        if mib > 0.0 { secs / mib } else { 0.0 }
    );
    Ok(())
}
