"""Writes the .npy fixtures of golden/tests/npy.rs with NumPy: NAME.npy and
NAME.expect (the array's bytes in C order: `numpy.load(NAME.npy).tobytes()`).
Run from this directory with NumPy installed: python3 make.py"""
import io

import numpy as np

rng = np.random.default_rng(7)
arrays = {
    "u8_1d": rng.integers(0, 256, 100, dtype=np.uint8),
    "f4_2d": rng.standard_normal((7, 5)).astype("<f4"),
    "i2_be_3d": rng.integers(-3000, 3000, (3, 4, 5)).astype(">i2"),
    "f8_fortran_2d": np.asfortranarray(rng.standard_normal((6, 4))),
    "u2_fortran_3d": np.asfortranarray(rng.integers(0, 65535, (2, 3, 4)).astype("<u2")),
    "record": np.array(
        [(i, (i, i + 1, i + 2)) for i in range(5)],
        dtype=[("a", "<i4"), ("b", "u1", (3,))],
    ),
    "bool": rng.integers(0, 2, 9).astype(bool),
    "scalar": np.array(1.5, dtype="<f4"),
    "empty": np.zeros((0, 3), dtype="<i8"),
    "unicode": np.array(["ab", "xyz"], dtype="<U3"),
}
for name, a in arrays.items():
    np.save(f"{name}.npy", a)
    with open(f"{name}.expect", "wb") as f:
        f.write(a.tobytes(order="C"))

# format version 2.0 (4-byte header length)
a = rng.integers(0, 1 << 30, (4, 8)).astype("<u4")
with open("v2.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
with open("v2.expect", "wb") as f:
    f.write(a.tobytes())

# an object array (pickled Python objects): must be refused
np.save("object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
