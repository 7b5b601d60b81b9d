//! The evaluation on a synthetic mini-corpus: ratios are the sums of
//! original bits over the sums of compressed bits, as defined.

use datafiles::corpus::{Corpus, Split};
use golden::baselines::{Bdi, Fpc};
use modeling::eval::{evaluate, Algo};
use sha2::{Digest, Sha256};

#[test]
fn ratios_on_a_mini_corpus() {
    let dir = std::env::temp_dir().join(format!("golden-eval-mini-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("int32")).unwrap();
    std::fs::create_dir_all(dir.join("mixed")).unwrap();
    // App a (int32, trainable): 50 all-zero blocks. App b (mixed,
    // evaluation only): 10 blocks of bytes no BDI encoding fits.
    let a = vec![0u8; 50 * 32];
    let b: Vec<u8> = (0..320u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut manifest = String::from(
        "file\tclass\tdomain\tbytes\tzero_block_fraction_32B\tsha256_16\tsource\tlicence\n",
    );
    for (name, class, data) in [("int32/a.bin", "int32", &a), ("mixed/b.bin", "mixed", &b)] {
        std::fs::write(dir.join(name), data).unwrap();
        let sha = hex::encode(&Sha256::digest(data)[..8]);
        manifest += &format!(
            "{name}\t{class}\ttest\t{}\t0.0\t{sha}\tsynthetic\tCC0\n",
            data.len()
        );
    }
    std::fs::write(dir.join("MANIFEST.tsv"), manifest).unwrap();
    let corpus = Corpus::load(&dir).unwrap();
    let split = Split::paper(&corpus, 1);
    let algos = vec![
        Algo {
            name: "BDI".into(),
            codec: Box::new(Bdi::new(32).unwrap()),
            paper: Some(1.67),
            context: false,
        },
        Algo {
            name: "FPC".into(),
            codec: Box::new(Fpc::new(32).unwrap()),
            paper: None,
            context: false,
        },
    ];
    let e = evaluate(&corpus, &split, &algos, 32, true, 3, &|_| {}).unwrap();
    std::fs::remove_dir_all(&dir).ok();

    // One trainable app: seen, 80 % trains, 10 of 50 blocks test.
    assert_eq!(e.apps[0].role, "seen");
    assert_eq!(e.apps[1].role, "evaluation");
    let na = e.apps[0].totals[0].blocks;
    assert_eq!(na, 10);
    assert_eq!(e.apps[1].totals[0].blocks, 10);
    // BDI: zero block = 4-bit tag; b's blocks: raw = 4 + 256 bits.
    let bdi_b = e.apps[1].totals[0];
    assert_eq!(e.apps[0].totals[0].bits, 4 * na);
    let groups = e.groups();
    let g = |n: &str| groups.iter().find(|g| g.name.starts_with(n)).unwrap();
    let overall = &g("overall").totals[0];
    assert_eq!(overall.ratio(), Some(256.0 / 4.0));
    assert_eq!(overall.byte_ratio(), Some(256.0 / 8.0));
    let all = &g("all").totals[0];
    assert_eq!(all.original_bits, 20 * 256);
    assert_eq!(all.bits, 4 * na + bdi_b.bits);
    if bdi_b.bits == 10 * 260 {
        assert_eq!(all.ratio(), Some(5120.0 / (40.0 + 2600.0)));
        assert_eq!(all.byte_ratio(), Some(5120.0 / (80.0 + 10.0 * 264.0)));
    }
    // FPC: a zero block is flag + one 8-word zero run = 7 bits.
    assert_eq!(e.apps[0].totals[1].bits, 7 * na);
    assert_eq!(g("integer").totals[1].ratio(), Some(256.0 / 7.0));
    assert_eq!(g("unseen").apps, 0);
    // No unseen application: no ratio, and no zstd/LZ4 figure either.
    assert_eq!(g("unseen").totals[0].ratio(), None);
    assert_eq!(g("unseen").lz4_ratio, None);
    assert_eq!(g("class mixed").totals[0].bits, bdi_b.bits);
    // Wins: BDI beats FPC on a (64 vs 36.6); FPC's 257-bit raw beats BDI's
    // 260 on b when both fall back to raw.
    let w = e.wins();
    assert_eq!(w[0] + w[1], 2);
    assert!(e.apps[0].lz4_file_bytes > 0 && e.apps[0].zstd_file_bytes > 0);
    let md = modeling::eval::report::markdown(&e);
    assert!(md.contains("| BDI |"));
    // A chart without groups still draws (axes, title), without a panic.
    let empty = modeling::plot::BarChart {
        title: "T",
        x_desc: "x",
        y_desc: "y",
        series: &["A"],
        groups: &[],
        marker_name: "",
    };
    assert!(modeling::plot::bar_chart_png(&empty).is_ok_and(|p| p.starts_with(b"\x89PNG")));
    let _ = std::fs::remove_dir_all(&dir);
}
