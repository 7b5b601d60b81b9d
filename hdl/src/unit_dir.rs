//! Writing a generated unit directory: the Verilog files, `files.f` (one
//! file name per line), `params.json` and the driver files beside it (the
//! C header of units with programmable slots).

use std::path::{Path, PathBuf};

use crate::ir::{write_files, VerilogFile};

/// Write `files`, `files.f`, `params.json` and the `extra` files (name,
/// text) into `out_dir` (created if needed) and return the written paths;
/// on failure, the path that could not be written and the I/O error.
pub fn write_unit_dir(
    out_dir: &Path,
    files: &[VerilogFile],
    params_json: &str,
    extra: &[(&str, &str)],
) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
    let mut paths = write_files(out_dir, files).map_err(|e| (out_dir.to_path_buf(), e))?;
    let list: String = files.iter().map(|f| format!("{}\n", f.file_name)).collect();
    let named = [("files.f", list.as_str()), ("params.json", params_json)];
    for &(name, text) in named.iter().chain(extra) {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|e| (p.clone(), e))?;
        paths.push(p);
    }
    Ok(paths)
}

/// Options whose value names where output goes: left out of the canonical
/// command, so the same unit generated into two directories (or on two
/// machines) has the same header.
const OUTPUT_OPTIONS: [&str; 4] = ["--out", "-o", "--build", "--rtl"];

/// The command line for a generated file's `// Command:` header: the
/// program's name without its directory (`gen`, not
/// `./target/release/gen`), then the arguments without the output-location
/// options (`--out DIR`, `-o DIR`, `--build DIR`, `--rtl DIR`, also in
/// `--opt=DIR` form); arguments with spaces or quotes are single-quoted.
pub fn canonical_command(args: impl IntoIterator<Item = String>) -> String {
    let mut it = args.into_iter();
    let program = it
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let mut out = vec![program];
    while let Some(a) = it.next() {
        if OUTPUT_OPTIONS.contains(&a.as_str()) {
            it.next();
            continue;
        }
        if OUTPUT_OPTIONS
            .iter()
            .any(|o| a.starts_with(&format!("{o}=")))
        {
            continue;
        }
        if a.is_empty() || a.contains([' ', '\t', '\'', '"', '\\']) {
            out.push(format!("'{}'", a.replace('\'', "'\\''")));
        } else {
            out.push(a);
        }
    }
    out.join(" ")
}

/// [`canonical_command`] of this process's own command line; an argument
/// that is not UTF-8 (a file name) is written with U+FFFD in place of the
/// bytes that are not.
pub fn this_command() -> String {
    canonical_command(std::env::args_os().map(|a| a.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::canonical_command;

    fn c(args: &[&str]) -> String {
        canonical_command(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn output_locations_and_binary_paths_are_left_out() {
        assert_eq!(
            c(&[
                "/home/u/mpcgen/target/release/gen",
                "--model",
                "models/int32",
                "--out",
                "/tmp/x"
            ]),
            "gen --model models/int32"
        );
        assert_eq!(
            c(&[
                "./gen",
                "-o",
                "a",
                "--model=m",
                "--build=/b",
                "--unit",
                "bdi"
            ]),
            "gen --model=m --unit bdi"
        );
        assert_eq!(c(&["gen", "--name", "my set"]), "gen --name 'my set'");
        assert_eq!(c(&["gen", "it's"]), "gen 'it'\\''s'");
        assert_eq!(c(&[]), "");
    }
}
