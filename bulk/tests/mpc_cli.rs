//! The `mpc` command as a user meets it: interrupted commands leave no
//! temporary file, a closed pipe ends it quietly, standard input goes to
//! standard output, flags that do not apply are refused, `ratio` labels
//! its columns and its overall figure and counts only a file's own bytes,
//! `calibrate` fails before measuring where it could not save, and the
//! default model set names `--model` when it is missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default")
}

/// `mpc` run in `dir` (outside the repository: no `models/default` there)
/// with no calibration file.
fn mpc_in(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpc"));
    c.current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .env("MPCGEN_CALIBRATION", dir.join("no-calibration.toml"));
    c
}

/// [`mpc_in`] with SIGINT, SIGTERM and SIGHUP at their default action in
/// the child (whatever this test process inherited) except `ignore`,
/// which the child starts ignoring.
fn mpc_with_signals(dir: &Path, ignore: Option<i32>) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = mpc_in(dir);
    // SAFETY: signal(2) is async-signal-safe, as the code between fork
    // and exec must be; it allocates nothing and touches no lock.
    unsafe {
        c.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                let action = if Some(sig) == ignore {
                    libc::SIG_IGN
                } else {
                    libc::SIG_DFL
                };
                if libc::signal(sig, action) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    mpc_in(dir).args(args).output().expect("run mpc")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {:?}\n{}\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Deterministic bytes that MPC does not compress (it still codes them
/// block by block, at its slowest).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Names in `dir`, sorted (hidden ones included).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Wait until a hidden temporary file `.PREFIX*.tmp` is in `dir`.
fn wait_for_temp(dir: &Path, prefix: &str, child: &mut Child) {
    let t = Instant::now();
    loop {
        if names(dir)
            .iter()
            .any(|n| n.starts_with(prefix) && n.ends_with(".tmp"))
        {
            return;
        }
        if let Some(s) = child.try_wait().expect("try_wait") {
            panic!("mpc ended ({s}) before its temporary file was seen");
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no temporary file {prefix}*.tmp in {:?}",
            names(dir)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Send `sig` to the child and check it ended as that signal ends a
/// process.
fn interrupt(child: &mut Child, sig: i32) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) with the id of a child that has not been waited for
    // (so the id is still ours) and a valid signal number.
    let r = unsafe { libc::kill(pid, sig) };
    assert_eq!(r, 0, "kill");
    let status = child.wait().expect("wait");
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.signal() == Some(sig) || status.code() == Some(128 + sig),
        "after signal {sig}: {status:?}"
    );
}

#[test]
fn sigint_and_sigterm_remove_the_temporary_file() {
    let d = tempfile::tempdir().expect("tempdir");
    // big enough that the single engine takes seconds on it
    let data = noise(64 << 20, 7);
    std::fs::write(d.path().join("big.bin"), &data).expect("write");
    let m = model();
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut c = mpc_with_signals(d.path(), None)
            .args(["compress", "-q", "--engine", "single", "-m"])
            .arg(&m)
            .arg("big.bin")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        wait_for_temp(d.path(), ".big.bin.gmcz.", &mut c);
        interrupt(&mut c, sig);
        assert_eq!(names(d.path()), ["big.bin"], "after signal {sig}");
    }
    assert!(
        std::fs::read(d.path().join("big.bin")).expect("read") == data,
        "the input changed"
    );
}

#[test]
fn interrupted_stream_commands_remove_the_temporary_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model();
    std::fs::write(d.path().join("a.bin"), noise(200_000, 3)).expect("write");
    let o = mpc_in(d.path())
        .args(["compress", "-q", "-m"])
        .arg(&m)
        .arg("a.bin")
        .output()
        .expect("run");
    ok(&o, "compress");
    let packed = std::fs::read(d.path().join("a.bin.gmcz")).expect("container");
    // input from a pipe that stays open: the command is waiting for more
    // when the signal comes
    for (sig, cmd, feed, prefix) in [
        (libc::SIGINT, "compress", &packed[..], ".out.gmcz."),
        (
            libc::SIGTERM,
            "decompress",
            &packed[..packed.len() / 2],
            ".out.bin.",
        ),
    ] {
        let out = if cmd == "compress" {
            "out.gmcz"
        } else {
            "out.bin"
        };
        let mut c = mpc_with_signals(d.path(), None)
            .args([cmd, "-q", "-m"])
            .arg(&m)
            .args(["-", "-o", out])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let mut stdin = c.stdin.take().expect("stdin");
        stdin.write_all(feed).expect("feed");
        stdin.flush().expect("flush");
        wait_for_temp(d.path(), prefix, &mut c);
        interrupt(&mut c, sig);
        drop(stdin);
        assert_eq!(names(d.path()), ["a.bin", "a.bin.gmcz"], "{cmd}");
    }
}

#[test]
fn an_ignored_signal_stays_ignored() {
    // as under `nohup`: SIGHUP ignored; the command goes on, and SIGTERM
    // still cleans up
    let d = tempfile::tempdir().expect("tempdir");
    let mut c = mpc_with_signals(d.path(), Some(libc::SIGHUP))
        .args(["compress", "-q", "-m"])
        .arg(model())
        .args(["-", "-o", "out.gmcz"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdin = c.stdin.take().expect("stdin");
    wait_for_temp(d.path(), ".out.gmcz.", &mut c);
    // SAFETY: as in `interrupt`
    assert_eq!(
        unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGHUP) },
        0
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(c.try_wait().expect("try_wait").is_none(), "SIGHUP ended it");
    interrupt(&mut c, libc::SIGTERM);
    drop(stdin);
    assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("a.bin"), noise(64, 5)).expect("write");
    // 3,000 lines, more than a pipe holds: the command is still writing
    // when the reader has gone
    let mut c = mpc_in(d.path())
        .arg("ratio")
        .arg("-m")
        .arg(model())
        .args(std::iter::repeat_n("a.bin", 3000))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(c.stdout.take());
    let o = c.wait_with_output().expect("wait");
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(101), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(141), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn ratio_labels_its_figures_and_says_the_round_trip_passed() {
    let d = tempfile::tempdir().expect("tempdir");
    let mut data = noise(3200, 9);
    data[..1600].fill(0);
    std::fs::write(d.path().join("a.bin"), &data).expect("write");
    let m = model();
    let m = m.to_str().expect("utf-8 path");
    let s = ok(&run(d.path(), &["ratio", "-m", m, "a.bin"]), "ratio");
    let lines: Vec<&str> = s.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.split_whitespace().collect::<Vec<_>>() == ["ratio", "blocks", "file"])
        .unwrap_or_else(|| panic!("no column headings:\n{s}"));
    assert!(lines[head + 1].ends_with("a.bin"), "{s}");
    assert!(
        lines[head + 2].contains("overall (every block of the files given"),
        "{s}"
    );
    assert!(!s.contains("verified"), "{s}");
    let v = ok(
        &run(d.path(), &["ratio", "--verify", "-m", m, "a.bin"]),
        "ratio --verify",
    );
    assert!(
        v.lines().last().is_some_and(|l| l.contains("verified")
            && l.contains("100 blocks")
            && l.contains("1 file")),
        "{v}"
    );
}

/// The ratio on `file`'s line of `mpc ratio` output.
fn ratio_of(s: &str, file: &str) -> f64 {
    let line = s
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(file))
        .unwrap_or_else(|| panic!("no line for {file}:\n{s}"));
    line.split_whitespace()
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no ratio in {line:?}"))
}

#[test]
fn padded_ratio_counts_the_files_bytes_only() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("one.bin"), [0x5au8]).expect("write");
    std::fs::write(d.path().join("empty.bin"), b"").expect("write");
    // 33 bytes: a whole block of zeros and one more byte
    let mut z = vec![0u8; 33];
    z[32] = 1;
    std::fs::write(d.path().join("z.bin"), &z).expect("write");
    let m = model();
    let m = m.to_str().expect("utf-8 path");
    let s = ok(
        &run(d.path(), &["ratio", "--pad", "-m", m, "one.bin", "z.bin"]),
        "ratio --pad",
    );
    // one byte of data takes more than 8 bits: below 1 (the padding as
    // data gave 6.737)
    let r = ratio_of(&s, "one.bin");
    assert!(r < 1.0, "{r}\n{s}");
    assert!(s.contains("last block: 1 byte, zero-padded to 32"), "{s}");
    // the overall figure counts 8 + 264 bits
    assert!(
        s.contains("overall (every block of the files given; 272 bits"),
        "{s}"
    );
    for (f, pad) in [
        ("one.bin", false),
        ("empty.bin", false),
        ("empty.bin", true),
    ] {
        let mut args = vec!["ratio", "-m", m, f];
        if pad {
            args.push("--pad");
        }
        let o = run(d.path(), &args);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(
            err.contains(&format!("{f}: ")) && err.contains("shorter than one 32-byte block"),
            "{err}"
        );
        assert!(!err.contains("file is empty"), "{err}");
    }
}

#[test]
fn standard_input_goes_to_standard_output() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model();
    let data = noise(50_000, 11);
    let pipe = |args: &[&str], input: &[u8]| -> Output {
        let mut c = mpc_in(d.path())
            .args(args)
            .arg("-m")
            .arg(&m)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = c.stdin.take().expect("stdin");
        let input = input.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let o = c.wait_with_output().expect("wait");
        feeder.join().expect("feeder");
        o
    };
    let c = pipe(&["compress", "-q", "-"], &data);
    ok(&c, "compress -");
    assert!(
        c.stdout.starts_with(&[0x89, b'G']),
        "no container on stdout"
    );
    let x = pipe(&["decompress", "-q", "-"], &c.stdout);
    ok(&x, "decompress -");
    assert!(x.stdout == data, "round trip through stdin/stdout");
    assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
    // files: INPUT.gmcz; INPUT less .gmcz, or INPUT.out
    std::fs::write(d.path().join("a.bin"), &data).expect("write");
    let o = mpc_in(d.path())
        .args(["compress", "-q", "-m"])
        .arg(&m)
        .arg("a.bin")
        .output()
        .expect("run");
    ok(&o, "compress a.bin");
    std::fs::rename(d.path().join("a.bin"), d.path().join("orig.bin")).expect("rename");
    std::fs::copy(d.path().join("a.bin.gmcz"), d.path().join("c.dat")).expect("copy");
    for f in ["a.bin.gmcz", "c.dat"] {
        let o = mpc_in(d.path())
            .args(["decompress", "-q", "-m"])
            .arg(&m)
            .arg(f)
            .output()
            .expect("run");
        ok(&o, f);
    }
    assert_eq!(
        names(d.path()),
        ["a.bin", "a.bin.gmcz", "c.dat", "c.dat.out", "orig.bin"]
    );
    assert!(std::fs::read(d.path().join("a.bin")).expect("read") == data);
    assert!(std::fs::read(d.path().join("c.dat.out")).expect("read") == data);
    // the help says which name is used
    let h = stdout(&run(d.path(), &["compress", "--help"]));
    assert!(
        h.contains("data.bin -> data.bin.gmcz") && h.contains("standard output when INPUT is `-`"),
        "{h}"
    );
    let h = stdout(&run(d.path(), &["decompress", "--help"]));
    assert!(
        h.contains("data.bin.gmcz -> data.bin")
            && h.contains("data.dat -> data.dat.out")
            && h.contains("standard output when INPUT is `-`"),
        "{h}"
    );
}

#[test]
fn a_named_pipe_is_read_to_its_end() {
    let d = tempfile::tempdir().expect("tempdir");
    let fifo = d.path().join("fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(st.success());
    let data = noise(100_000, 13);
    let feeder = {
        let (fifo, data) = (fifo.clone(), data.clone());
        std::thread::spawn(move || std::fs::write(fifo, data).expect("write fifo"))
    };
    let o = mpc_in(d.path())
        .args(["compress", "-q", "-m"])
        .arg(model())
        .args(["fifo", "-o", "f.gmcz"])
        .output()
        .expect("run");
    feeder.join().expect("feeder");
    ok(&o, "compress fifo");
    let o = mpc_in(d.path())
        .args(["decompress", "-q", "-m"])
        .arg(model())
        .args(["f.gmcz", "-o", "-"])
        .output()
        .expect("run");
    ok(&o, "decompress");
    assert!(o.stdout == data, "{} bytes back", o.stdout.len());
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    let d = tempfile::tempdir().expect("tempdir");
    std::fs::write(d.path().join("a.bin"), noise(1000, 1)).expect("write");
    let cases: &[(&[&str], &str)] = &[
        (
            &["compress", "--engine", "single", "-j", "4", "a.bin"],
            "--threads",
        ),
        (
            &[
                "compress",
                "--engine",
                "parallel",
                "--calibration",
                "c.toml",
                "a.bin",
            ],
            "--calibration",
        ),
        (
            &[
                "decompress",
                "--engine",
                "single",
                "--gpu-adapter",
                "0",
                "a.bin.gmcz",
            ],
            "--gpu-adapter",
        ),
        (
            &["bench", "--algos", "bdi", "--kernel", "scalar", "a.bin"],
            "--kernel",
        ),
        (&["bench", "--gpu-adapter", "0", "a.bin"], "--gpu"),
        (&["bench", "--gpu-part-mib", "8", "a.bin"], "--gpu"),
        (&["calibrate", "--gpu-adapter", "0", "a.bin"], "--gpu"),
        (&["trace", "-m", "models/x", "--index", "3"], "--file"),
    ];
    for (args, flag) in cases {
        let o = run(d.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("Usage:"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(names(d.path()), ["a.bin"]);
}

#[test]
fn the_default_model_set_names_the_flag_when_missing() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model();
    std::fs::write(d.path().join("a.bin"), noise(1000, 1)).expect("write");
    let o = mpc_in(d.path())
        .args(["compress", "-q", "-m"])
        .arg(&m)
        .arg("a.bin")
        .output()
        .expect("run");
    ok(&o, "compress");
    // bench is given a directory that does not exist: the model set is
    // what it must fail on, before reading any file
    for args in [
        &["decompress", "a.bin.gmcz", "-o", "x"][..],
        &["get", "--block", "0", "a.bin.gmcz"][..],
        &["bench", "--algos", "mpc", "no-such-dir"][..],
        &["compress", "a.bin", "-o", "y"][..],
    ] {
        let o = run(d.path(), args);
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(
            err.contains("models/default") && err.contains("--model"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no-such-dir"), "{args:?}: {err}");
    }
    assert_eq!(names(d.path()), ["a.bin", "a.bin.gmcz"]);
    // given explicitly, a missing model set is just that
    let err = stderr(&run(
        d.path(),
        &["decompress", "-m", "nowhere", "a.bin.gmcz"],
    ));
    assert!(err.contains("nowhere") && !err.contains("hint"), "{err}");
}

#[test]
fn calibrate_checks_where_it_saves_first_and_says_never() {
    let d = tempfile::tempdir().expect("tempdir");
    let m = model();
    let m = m.to_str().expect("utf-8 path");
    std::fs::write(d.path().join("a.bin"), noise(100_000, 1)).expect("write");
    std::fs::write(d.path().join("plain"), b"a file").expect("write");
    // a directory that cannot be made (a file is in the way), a directory
    let t = Instant::now();
    for cal in ["plain/cal.toml", "plain/sub/cal.toml", "."] {
        let o = run(
            d.path(),
            &["calibrate", "-m", m, "--calibration", cal, "a.bin"],
        );
        assert!(!o.status.success(), "{cal}");
        assert!(
            o.stdout.is_empty(),
            "{cal}: measured first:\n{}",
            stdout(&o)
        );
        assert!(
            stderr(&o).contains("cannot be written"),
            "{cal}: {}",
            stderr(&o)
        );
    }
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    // an existing file is kept when the command fails before saving
    let mine = "# my calibration\n";
    std::fs::write(d.path().join("cal.toml"), mine).expect("write");
    let o = run(
        d.path(),
        &[
            "calibrate",
            "-m",
            "nowhere",
            "--calibration",
            "cal.toml",
            "a.bin",
        ],
    );
    assert!(!o.status.success());
    assert_eq!(
        std::fs::read_to_string(d.path().join("cal.toml")).expect("read"),
        mine
    );
    assert_eq!(names(d.path()), ["a.bin", "cal.toml", "plain"]);
    // one thread: the pool is never faster, and says so in words
    let o = run(
        d.path(),
        &[
            "calibrate",
            "-m",
            m,
            "-j",
            "1",
            "--reps",
            "1",
            "--calibration",
            "cal.toml",
            "a.bin",
        ],
    );
    let s = ok(&o, "calibrate");
    assert!(!s.contains(&i64::MAX.to_string()), "{s}");
    let line = s
        .lines()
        .find(|l| l.starts_with("mpc: parallel compress"))
        .unwrap_or_else(|| panic!("no threshold line:\n{s}"));
    assert!(line.contains("never") || line.contains(" bytes"), "{line}");
    let saved = std::fs::read_to_string(d.path().join("cal.toml")).expect("read");
    assert!(saved.contains("[mpc]"), "{saved}");
    assert_eq!(names(d.path()), ["a.bin", "cal.toml", "plain"]);
}

/// A container whose header names a block size its codec does not code
/// (checksums valid: another writer, or damage) is refused naming the
/// file and the header field, not a flag the user never passed.
#[test]
fn a_header_block_size_the_codec_does_not_code_names_file_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("in.bin"), noise(4096, 7)).expect("write input");
    ok(
        &run(d, &["compress", "-a", "bdi", "in.bin", "-o", "in.gmcz"]),
        "compress",
    );
    let mut c = std::fs::read(d.join("in.gmcz")).expect("read container");
    c[60..64].copy_from_slice(&33u32.to_le_bytes());
    let crc = bulk::format::crc32(&[&c[..80]]);
    c[80..84].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(d.join("bad.gmcz"), &c).expect("write container");
    let want = "bad.gmcz: header: block size 33 is not one `bdi` codes (32 or 128)";
    for args in [
        &["decompress", "bad.gmcz", "-o", "out.bin"][..],
        &["get", "bad.gmcz", "--block", "0"][..],
    ] {
        let o = run(d, args);
        assert!(!o.status.success(), "{args:?} accepted the container");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("--block-bytes"), "{args:?}: {e}");
    }
    assert!(!d.join("out.bin").exists());
}
