//! The one build-cache policy of every testbench (MPC and the stream
//! units, Icarus and Verilator): a simulator build in a directory is
//! reused when the directory's stamp file holds the key of what the build
//! was made from. The key is the simulator's version, the compile command
//! (program and every argument) and the contents of every source file,
//! except the `// Command:` header line of generated files: that line says
//! how a file was generated, not what it is, so a build survives
//! regenerating the same units with other options. A failed or interrupted
//! compile leaves no stamp.

use std::path::{Path, PathBuf};
use std::process::Command;

use golden::hash::{fnv1a64_from, FNV1A64_START};

use crate::Simulator;

/// The stamp file in a build directory.
pub const STAMP_FILE: &str = "build.stamp";

/// The key of one build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildKey(String);

/// The first line of `--version` (`-V` for Icarus), empty when it cannot
/// be run.
pub fn tool_version(sim: Simulator) -> String {
    let (tool, flag) = match sim {
        Simulator::Icarus => ("iverilog", "-V"),
        Simulator::Verilator => ("verilator", "--version"),
    };
    Command::new(tool)
        .arg(flag)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default()
}

impl BuildKey {
    /// The key of compiling `sources` with `command` on `sim`.
    pub fn new(
        sim: Simulator,
        command: &Command,
        sources: &[PathBuf],
    ) -> Result<BuildKey, (PathBuf, std::io::Error)> {
        let mut key = format!("{}\n{:?}\n", tool_version(sim), command);
        for f in sources {
            let text = std::fs::read(f).map_err(|e| (f.clone(), e))?;
            let mut h = FNV1A64_START;
            for line in text.split(|&c| c == b'\n') {
                if !line.starts_with(b"// Command:") {
                    h = fnv1a64_from(h, line);
                    h = fnv1a64_from(h, b"\n");
                }
            }
            key.push_str(&format!("{} {h:016x}\n", f.display()));
        }
        Ok(BuildKey(key))
    }

    /// Whether `dir` holds a finished build of this key (`exe` is there
    /// and the stamp matches).
    pub fn is_built(&self, dir: &Path, exe: &Path) -> bool {
        exe.is_file() && std::fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|s| s == self.0)
    }

    /// Forget the build in `dir` (before compiling over it).
    pub fn forget(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(STAMP_FILE));
    }

    /// Record a finished build of this key in `dir`.
    pub fn record(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::write(dir.join(STAMP_FILE), &self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_header_line_does_not_change_the_key_and_the_rest_does() {
        let d = std::env::temp_dir().join(format!("mpcgen-cache-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("u.v");
        let key = |text: &str| {
            std::fs::write(&f, text).unwrap();
            BuildKey::new(
                Simulator::Icarus,
                &Command::new("true"),
                std::slice::from_ref(&f),
            )
            .unwrap()
        };
        let a = key("// Command: gen --model a\nmodule u; endmodule\n");
        let b = key("// Command: gen mpc --model a\nmodule u; endmodule\n");
        let c = key("// Command: gen --model a\nmodule v; endmodule\n");
        assert_eq!(a, b);
        assert_ne!(a, c);
        let exe = d.join("sim");
        std::fs::write(&exe, b"").unwrap();
        assert!(!a.is_built(&d, &exe));
        a.record(&d).unwrap();
        assert!(a.is_built(&d, &exe) && !c.is_built(&d, &exe));
        BuildKey::forget(&d);
        assert!(!a.is_built(&d, &exe));
        let _ = std::fs::remove_dir_all(&d);
    }
}
