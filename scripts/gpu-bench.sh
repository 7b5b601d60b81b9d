#!/usr/bin/env bash
# The GPU engine measured on whatever GPU this machine has: one
# `mpc bench --gpu` run over one stream (MPC, MAG-aware BDI and DPC through
# the GPU engine with the host<->device copy bandwidth, the upload / kernel /
# download split and the kernel rate, beside the CPU pool on every host
# thread with lz4 and zstd, and the engine's host path alone: its transfers
# without kernels against plain copies of the same bytes, and the stream
# loop around it) and `compress` / `decompress --engine gpu`
# file to file, each output checked with cmp against the input and against
# the CPU engine's container (file to file first: it is the shorter part). Every figure and log lands in one directory.
#
# Settings (environment):
#   GPU_BENCH_OUT     output directory (default build/gpu-bench)
#   GPU_BENCH_MIB     stream size in MiB, the input files repeated until
#                     it is reached (default 1024)
#   GPU_BENCH_FILES   files or directories making the stream
#                     (default ../shared/corpus)
#   GPU_BENCH_MPC     a built `mpc` binary with the `gpu` feature; when
#                     unset, cargo builds one (release)
#   GPU_BENCH_WORK    scratch directory for the stream and the containers
#                     (default: a fresh directory under /tmp, removed at
#                     the end)
#   GPU_BENCH_ADAPTER adapter for --gpu-adapter (default: the engine's
#                     choice, a discrete GPU first)
#   GPU_BENCH_MODEL   MPC model set (default models/default)
#   GPU_BENCH_MPC_KERNELS
#                     forms of the MPC kernels the bench times, a row each
#                     (--gpu-mpc-kernels; default specialised,generic)
#
# Exit status 0 only when every step ran and every cmp matched; the last
# line of summary.txt says which step failed otherwise.
set -uo pipefail

out=${GPU_BENCH_OUT:-build/gpu-bench}
mib=${GPU_BENCH_MIB:-1024}
files=${GPU_BENCH_FILES:-../shared/corpus}
model=${GPU_BENCH_MODEL:-models/default}
mpc_kernels=${GPU_BENCH_MPC_KERNELS:-specialised,generic}
adapter=${GPU_BENCH_ADAPTER:-}
threads=$(nproc)

case $mib in
'' | *[!0-9]*)
    echo "gpu-bench: GPU_BENCH_MIB must be a whole number of MiB, not '$mib'" >&2
    exit 2
    ;;
esac
if [ "$mib" -lt 1 ]; then
    echo "gpu-bench: GPU_BENCH_MIB must be at least 1" >&2
    exit 2
fi

mkdir -p "$out" || exit 2
summary=$out/summary.txt
: >"$summary"
failed=""

say() { echo "$*" | tee -a "$summary"; }
now() { date +%s.%N; }
# seconds between two `now` stamps, 3 decimals
span() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# MB/s of $1 bytes in $2 seconds
rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", n / s / 1e6; else print "-" }'; }
fail() {
    failed="$failed $1"
    say "FAILED: $1"
}

if [ -n "${GPU_BENCH_WORK:-}" ]; then
    work=$GPU_BENCH_WORK
    mkdir -p "$work" || exit 2
else
    work=$(mktemp -d /tmp/gpu-bench.XXXXXX) || exit 2
    trap 'rm -rf "$work"' EXIT
fi

say "gpu-bench $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $threads host threads"
say "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# 1. The binary.
t0=$(now)
if [ -n "${GPU_BENCH_MPC:-}" ]; then
    mpc=$GPU_BENCH_MPC
    say "binary: $mpc (given)"
else
    if cargo build --release -p bulk --features gpu --bin mpc >"$out/build.log" 2>&1; then
        mpc=target/release/mpc
        say "binary: built with cargo (release, feature gpu) in $(span "$t0" "$(now)") s"
    else
        fail "cargo build (see build.log)"
        exit 1
    fi
fi
if [ ! -x "$mpc" ]; then
    fail "no executable at $mpc"
    exit 1
fi

# 2. The device.
"$mpc" adapters >"$out/adapters.txt" 2>&1 || fail "mpc adapters"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
    say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
fi
say "adapters:"
sed 's/^/  /' "$out/adapters.txt" | tee -a "$summary"
gpu_opt=()
if [ -n "$adapter" ]; then
    gpu_opt=(--gpu-adapter "$adapter")
fi

# 3. The stream: the input files, in name order, repeated up to the size.
list=()
for f in $files; do
    if [ -d "$f" ]; then
        while IFS= read -r g; do list+=("$g"); done < <(find "$f" -type f -name '*.bin' | LC_ALL=C sort)
    elif [ -f "$f" ]; then
        list+=("$f")
    else
        fail "input $f does not exist"
        exit 1
    fi
done
if [ ${#list[@]} -eq 0 ]; then
    fail "no input files in $files"
    exit 1
fi
stream=$work/stream.bin
want=$((mib * 1048576))
: >"$stream"
have=0
while [ "$have" -lt "$want" ]; do
    for g in "${list[@]}"; do
        cat "$g" >>"$stream"
        have=$(stat -c %s "$stream")
        [ "$have" -ge "$want" ] && break
    done
done
truncate -s "$want" "$stream"
size=$(stat -c %s "$stream")
say "stream: $size bytes from ${#list[@]} files ($files) repeated"

# 4. File to file: GPU engine against the CPU pool, containers and round
#    trips compared byte for byte.
say ""
say "file to file ($size bytes):"
printf 'algo\tstep\tseconds\tMB_s\n' >"$out/files.tsv"
for algo in mpc magbdi dpc; do
    g=$work/$algo.gpu.gmcz
    c=$work/$algo.cpu.gmcz
    back=$work/$algo.back
    step() { # name, then the command
        local name=$1 s e
        shift
        s=$(now)
        if "$@" >>"$out/files.log" 2>&1; then
            e=$(now)
            local secs
            secs=$(span "$s" "$e")
            printf '%s\t%s\t%s\t%s\n' "$algo" "$name" "$secs" "$(rate "$size" "$secs")" >>"$out/files.tsv"
            say "  $algo $name: $secs s ($(rate "$size" "$secs") MB/s)"
        else
            fail "$algo $name (see files.log)"
            return 1
        fi
    }
    step "compress gpu" "$mpc" compress -q -f -a "$algo" -m "$model" --engine gpu "${gpu_opt[@]}" "$stream" -o "$g" || continue
    step "compress cpu" "$mpc" compress -q -f -a "$algo" -m "$model" --engine parallel -j "$threads" "$stream" -o "$c" || continue
    if cmp "$g" "$c" >>"$out/files.log" 2>&1; then
        say "  $algo: GPU container identical to the CPU container ($(stat -c %s "$g") bytes)"
    else
        fail "$algo containers differ"
    fi
    step "decompress gpu" "$mpc" decompress -q -f -m "$model" --engine gpu "${gpu_opt[@]}" "$g" -o "$back" || continue
    if cmp "$back" "$stream" >>"$out/files.log" 2>&1; then
        say "  $algo: GPU round trip identical to the input"
    else
        fail "$algo GPU round trip differs from the input"
    fi
    step "decompress cpu" "$mpc" decompress -q -f -m "$model" --engine parallel -j "$threads" "$g" -o "$back" || continue
    if ! cmp "$back" "$stream" >>"$out/files.log" 2>&1; then
        fail "$algo CPU round trip differs from the input"
    fi
    rm -f "$g" "$c" "$back"
done

say ""
# 5. The bench: GPU engine and CPU pool on all host threads, one run.
t0=$(now)
if "$mpc" bench --gpu "${gpu_opt[@]}" --gpu-mpc-kernels "$mpc_kernels" --algos mpc,magbdi,dpc --zstd 1 -j "$threads" \
    -m "$model" "$stream" >"$out/bench.txt" 2>"$out/bench.log"; then
    say "bench: $(span "$t0" "$(now)") s"
    tee -a "$summary" <"$out/bench.txt"
    grep -q '^transfers only' "$out/bench.txt" || fail "mpc bench --gpu printed no transfer figures"
else
    fail "mpc bench --gpu (see bench.log)"
fi

say ""
if [ -n "$failed" ]; then
    say "gpu-bench: failed:$failed"
    exit 1
fi
say "gpu-bench: every step ran, every container and round trip matched"
