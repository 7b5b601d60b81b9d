//! A corpus whose manifest lists `.npy` arrays reads their C-order bytes
//! as blocks.

#[path = "../../golden/tests/common/mod.rs"]
mod common;
use common::npy_v1;

#[test]
fn a_manifest_corpus_may_hold_arrays() {
    use sha2::{Digest, Sha256};
    let d = tempfile::tempdir().expect("tempdir");
    let data: Vec<u8> = (0..64 * 32).map(|i| (i * 7 % 256) as u8).collect();
    let file = npy_v1(
        "{'descr': '<i4', 'fortran_order': False, 'shape': (16, 32), }",
        &data,
    );
    std::fs::create_dir(d.path().join("int32")).expect("mkdir");
    std::fs::write(d.path().join("int32/a.npy"), &file).expect("write");
    let hash = hex::encode(&Sha256::digest(&file)[..8]);
    std::fs::write(
        d.path().join("MANIFEST.tsv"),
        format!(
            "file\tclass\tdomain\tbytes\tzero_block_fraction_32B\tsha256_16\tsource\tlicence\n\
             int32/a.npy\tint32\ttest\t{}\t0.000\t{hash}\ttest\tMIT\n",
            file.len()
        ),
    )
    .expect("manifest");
    let corpus = datafiles::corpus::Corpus::load(d.path()).expect("load");
    let blocks: Vec<u8> = corpus.apps[0].blocks.concat();
    assert_eq!(blocks, data);
}
