//! `.npy` reading: fixtures written by NumPy (`tests/data/npy/make.py`)
//! read back as `numpy.load(f).tobytes()`, and malformed files refused with
//! errors that name the file and the problem, never a panic or an
//! allocation sized by a header field.

use std::path::{Path, PathBuf};

use golden::npy::{self, NpyError};

mod common;
use common::npy_v1;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn numpy_fixtures_read_as_their_c_order_bytes() {
    let cases = [
        ("u8_1d", "|u1", vec![100], false),
        ("f4_2d", "<f4", vec![7, 5], false),
        ("i2_be_3d", ">i2", vec![3, 4, 5], false),
        ("f8_fortran_2d", "<f8", vec![6, 4], true),
        ("u2_fortran_3d", "<u2", vec![2, 3, 4], true),
        ("bool", "|b1", vec![9], false),
        ("scalar", "<f4", vec![], false),
        ("empty", "<i8", vec![0, 3], false),
        ("unicode", "<U3", vec![2], false),
        ("v2", "<u4", vec![4, 8], false),
    ];
    for (name, descr, shape, fortran) in cases {
        let path = dir().join(format!("{name}.npy"));
        let (bytes, info) = npy::parse(&fixture(&format!("{name}.npy")), &path)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bytes, fixture(&format!("{name}.expect")), "{name}: bytes");
        assert_eq!(info.descr, descr, "{name}: dtype");
        assert_eq!(info.shape, shape, "{name}: shape");
        assert_eq!(info.fortran, fortran, "{name}: order");
        assert_eq!(
            npy::read_data(&path).expect("read_data"),
            bytes,
            "{name}: read_data"
        );
    }
    // a structured dtype: 4 + 3 bytes a record
    let path = dir().join("record.npy");
    let (bytes, info) = npy::parse(&fixture("record.npy"), &path).expect("record");
    assert_eq!(bytes, fixture("record.expect"));
    assert_eq!((info.item_bytes, info.shape), (7, vec![5]));
}

#[test]
fn fortran_order_is_transposed_to_c_order() {
    // a 2 x 3 array [[0, 1, 2], [3, 4, 5]] stored column by column
    let f = npy_v1(
        "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
        &[0, 3, 1, 4, 2, 5],
    );
    let (bytes, _) = npy::parse(&f, Path::new("t.npy")).expect("parse");
    assert_eq!(bytes, [0, 1, 2, 3, 4, 5]);
    // 2-byte items move whole: [[a, b], [c, d]] stored a c b d
    let f = npy_v1(
        "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2), }",
        &[0xa0, 0xa1, 0xc0, 0xc1, 0xb0, 0xb1, 0xd0, 0xd1],
    );
    let (bytes, _) = npy::parse(&f, Path::new("t.npy")).expect("parse");
    assert_eq!(bytes, [0xa0, 0xa1, 0xb0, 0xb1, 0xc0, 0xc1, 0xd0, 0xd1]);
}

#[test]
fn bad_files_are_clear_errors() {
    let p = Path::new("bad.npy");
    let err = |bytes: &[u8]| npy::parse(bytes, p).expect_err("must fail");
    assert!(matches!(err(b"hello world"), NpyError::Magic { .. }));
    assert!(matches!(err(b"\x93NUMPY"), NpyError::Magic { .. }));
    let mut v = npy_v1(
        "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }",
        &[1; 4],
    );
    v[6] = 9;
    assert!(matches!(err(&v), NpyError::Version { major: 9, .. }));
    // a header length past the file, and a huge one: refused before any
    // allocation of that size
    let mut v = npy::MAGIC.to_vec();
    v.extend_from_slice(&[2, 0]);
    v.extend_from_slice(&u32::MAX.to_le_bytes());
    v.extend_from_slice(b"{}");
    let e = err(&v);
    assert!(
        matches!(e, NpyError::HeaderSize { len, .. } if len == u32::MAX as u64),
        "{e}"
    );
    // data shorter and longer than the shape says
    for n in [3usize, 5] {
        let v = npy_v1(
            "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
            &vec![0; n],
        );
        let e = err(&v);
        assert!(
            matches!(e, NpyError::Length { expected: 4, .. }),
            "{n} bytes: {e}"
        );
        assert!(e.to_string().contains("bad.npy"), "{e}");
    }
    // a shape whose byte count overflows: a length error, not an overflow
    let v = npy_v1(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615, 18446744073709551615, 4), }",
        &[0; 8],
    );
    assert!(matches!(err(&v), NpyError::Length { .. }));
    // not a dict, missing keys, an unknown dtype
    for dict in [
        "[1, 2, 3]",
        "{'descr': '<f4', 'shape': (2,), }",
        "{'descr': '<q9', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,",
    ] {
        let e = err(&npy_v1(dict, &[0; 8]));
        assert!(matches!(e, NpyError::Header { .. }), "{dict}: {e}");
    }
    // object arrays, from NumPy and hand-made inside a record
    let e = npy::parse(&fixture("object.npy"), &dir().join("object.npy")).expect_err("object");
    assert!(matches!(e, NpyError::Object { .. }), "{e}");
    assert!(e.to_string().contains("Python objects"), "{e}");
    let e = err(&npy_v1(
        "{'descr': [('a', '<i4'), ('b', '|O')], 'fortran_order': False, 'shape': (1,), }",
        &[0; 12],
    ));
    assert!(matches!(e, NpyError::Object { .. }), "{e}");
}

#[test]
fn arbitrary_bytes_after_the_magic_never_panic() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let base = fixture("f4_2d.npy");
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut v = base.clone();
        // flip a few bytes of the header or cut the file
        for k in 0..1 + (x % 4) as usize {
            let at = 6 + ((x >> (8 * k)) as usize % (v.len() - 6));
            v[at] ^= (x >> 40) as u8 | 1;
        }
        if i % 5 == 0 {
            v.truncate((x as usize >> 3) % v.len());
        }
        let _ = npy::parse(&v, Path::new("fuzz.npy"));
    }
}

#[test]
fn raw_files_read_as_they_are() {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("dump.bin");
    std::fs::write(&p, b"\x00\x01raw").expect("write");
    assert_eq!(npy::read_data(&p).expect("read"), b"\x00\x01raw");
    // a .npy name on a file that is not one is an error, not raw data
    let q = d.path().join("not.npy");
    std::fs::write(&q, b"\x00\x01raw").expect("write");
    assert!(npy::read_data(&q).is_err());
    assert!(npy::is_data_file(&p) && npy::is_data_file(&q));
    assert!(!npy::is_data_file(&d.path().join("MANIFEST.tsv")));
}
