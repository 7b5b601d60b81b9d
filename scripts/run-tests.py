#!/usr/bin/env python3
"""Build the workspace's test executables with cargo, then run them JOBS at
a time instead of one after another.

    scripts/run-tests.py [--jobs N] [--times FILE] -- CARGO_TEST_ARGS...

`cargo test` runs its test executables in turn, so a long test that uses
one core (a simulation, a synthesis run, a solver) leaves the other cores
idle. This script runs `cargo test CARGO_TEST_ARGS --no-run` (cargo's own
build, output and errors), takes the executables from cargo's JSON
messages, and runs N of them at a time (default: one per core), each as
`cargo test` would: in its package's directory, with `CARGO_MANIFEST_DIR`,
`CARGO_PKG_NAME` and `CARGO_CRATE_NAME` set, libtest running its tests on
its own threads. The executables that took longest in the previous run
start first (times kept in FILE, default TARGET/PROFILE/test-times.tsv;
without it, the order of the list below), so that the run does not end
on one long executable with the other cores idle. Then the documentation
tests run through `cargo test --doc` with the same arguments.

Each executable's output is printed in one piece when it ends, after a
line naming it, its exit status and its wall time; a line is printed when
each one starts. The exit status is 0 only when every executable and the
documentation tests passed; the end lists those that failed.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

# Integration-test executables (tests/NAME.rs) that took longest in
# `make test` on a 2-core machine, longest first: the start order when no
# times file exists yet.
LONGEST_FIRST = [
    "lint_every_unit",
    "cosim",
    "mutate",
    "small_unit",
    "mpc_sim",
    "slots_cosim",
    "prove",
    "train_reproduce",
    "unit_synth_cli",
    "slots_decompressor",
    "slots_compressor",
    "slots_gen",
    "magbdi_sim",
    "magbdi_cosim",
    "gpu_mpc",
    "gpu_corpus",
    "gpu_engine",
]


def log(msg):
    print(msg, flush=True)


def build(cargo, args):
    """cargo test ARGS --no-run; returns the test executables."""
    cmd = [cargo, "test", *args, "--no-run", "--message-format=json-render-diagnostics"]
    log("$ " + " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    found = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-message":
            rendered = (msg.get("message") or {}).get("rendered")
            if rendered:
                sys.stderr.write(rendered)
            continue
        if msg.get("reason") != "compiler-artifact":
            continue
        exe = msg.get("executable")
        if not exe or not (msg.get("profile") or {}).get("test"):
            continue
        target = msg.get("target") or {}
        kind = ",".join(target.get("kind") or [])
        found.append(
            {
                "name": target.get("name", "?"),
                "kind": kind,
                "src": target.get("src_path", ""),
                "exe": exe,
                "dir": os.path.dirname(msg.get("manifest_path", "")),
                "package": package_name(msg.get("package_id", "")),
            }
        )
    status = proc.wait()
    if status != 0:
        log(f"cargo test --no-run failed (exit {status})")
        sys.exit(status)
    return found


def package_name(package_id):
    """The package name of a cargo package id (old and new id formats)."""
    # new: "path+file:///work/x/golden#0.1.0" or "...#name@0.1.0";
    # old: "golden 0.1.0 (path+file:///...)"
    if " " in package_id:
        return package_id.split(" ", 1)[0]
    tail = package_id.rsplit("#", 1)[-1]
    if "@" in tail:
        return tail.split("@", 1)[0]
    return package_id.rsplit("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def label(t):
    src = t["src"]
    rel = src[len(t["dir"]) + 1 :] if src.startswith(t["dir"] + "/") else src
    return f"{t['package']}: {rel} ({t['kind']})"


def read_times(path):
    times = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 2:
                    try:
                        times[parts[0]] = float(parts[1])
                    except ValueError:
                        pass
    except OSError:
        pass
    return times


def write_times(path, times):
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            for key, secs in sorted(times.items()):
                f.write(f"{key}\t{secs:.1f}\n")
        os.replace(tmp, path)
    except OSError as e:
        log(f"could not write test times to {path}: {e}")


def order(tests, times):
    """Longest first: previous times, else the built-in list, else cargo's order."""
    rank = {n: i for i, n in enumerate(LONGEST_FIRST)}

    def key(item):
        i, t = item
        k = label(t)
        if k in times:
            return (0, -times[k], i)
        if t["kind"] == "test" and t["name"] in rank:
            return (1, rank[t["name"]], i)
        return (2, 0, i)

    return [t for _, t in sorted(enumerate(tests), key=key)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--times", help="times file (default TARGET/PROFILE/test-times.tsv)")
    ap.add_argument("cargo_args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.cargo_args[1:] if a.cargo_args[:1] == ["--"] else a.cargo_args
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    cargo = os.environ.get("CARGO", "cargo")
    tests = build(cargo, args)
    if not tests:
        log("cargo built no test executables")
        return 1
    times_path = a.times
    if not times_path:
        times_path = os.path.join(os.path.dirname(tests[0]["exe"]), "..", "test-times.tsv")
    times = read_times(times_path)
    queue = order(tests, times)
    log(f"running {len(queue)} test executables, {a.jobs} at a time")

    lock = threading.Lock()
    failed = []
    children = set()
    start_all = time.monotonic()

    def run(t):
        env = dict(os.environ)
        env["CARGO_MANIFEST_DIR"] = t["dir"]
        env["CARGO_PKG_NAME"] = t["package"]
        env["CARGO_CRATE_NAME"] = t["name"].replace("-", "_")
        with lock:
            log(f"start   {label(t)}")
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [t["exe"]],
            cwd=t["dir"] or None,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with lock:
            children.add(proc)
        out, _ = proc.communicate()
        secs = time.monotonic() - t0
        with lock:
            children.discard(proc)
            status = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
            log(f"\n     Ran {label(t)}: {status}, {secs:.1f} s")
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
            times[label(t)] = secs
            if proc.returncode != 0:
                failed.append(label(t))

    next_index = [0]

    def worker():
        while True:
            with lock:
                if next_index[0] >= len(queue):
                    return
                t = queue[next_index[0]]
                next_index[0] += 1
            run(t)

    def stop(signum, _frame):
        with lock:
            for p in children:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    workers = [threading.Thread(target=worker, daemon=True) for _ in range(a.jobs)]
    for w in workers:
        w.start()
    for w in workers:
        while w.is_alive():
            w.join(0.5)
    write_times(times_path, times)

    doc = subprocess.run([cargo, "test", *args, "--doc"])
    if doc.returncode != 0:
        failed.append(f"documentation tests (exit {doc.returncode})")

    log(
        f"\n{len(queue)} test executables and the documentation tests in "
        f"{time.monotonic() - start_all:.0f} s, {a.jobs} at a time"
    )
    if failed:
        log(f"{len(failed)} failed:")
        for f in failed:
            log(f"  {f}")
        return 1
    log("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
