//! Writing a generated unit directory: the Verilog files, `files.f` (one
//! file name per line) and `params.json`.

use std::path::{Path, PathBuf};

use crate::ir::{write_files, IrError, Module, VerilogFile};

/// Write `files`, `files.f` and `params.json` into `out_dir` (created if
/// needed) and return the written paths; on failure, the path that could not
/// be written and the I/O error.
pub fn write_unit_dir(
    out_dir: &Path,
    files: &[VerilogFile],
    params_json: &str,
) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
    let mut paths = write_files(out_dir, files).map_err(|e| (out_dir.to_path_buf(), e))?;
    let list: String = files.iter().map(|f| format!("{}\n", f.file_name)).collect();
    for (name, text) in [("files.f", list.as_str()), ("params.json", params_json)] {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|e| (p.clone(), e))?;
        paths.push(p);
    }
    Ok(paths)
}

/// `value` as pretty-printed JSON with a final newline (the text of a
/// `params.json`).
pub fn json_text<T: serde::Serialize>(value: &T) -> String {
    // Plain structs of strings and numbers always serialise.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The Verilog of built modules, in order, each with its submodules and
/// `header` (shared by the MPC, BDI and DPC generators).
pub fn emit_modules(
    modules: impl IntoIterator<Item = Result<Module, IrError>>,
    header: &[String],
) -> Result<Vec<VerilogFile>, IrError> {
    let mut files = Vec::new();
    for m in modules {
        files.extend(m?.emit_hierarchy(header)?);
    }
    Ok(files)
}
