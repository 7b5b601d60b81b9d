//! The kernels' uniforms: one `#[repr(C)]` struct per WGSL uniform
//! struct, filled by field name and uploaded with [`bytemuck::bytes_of`].
//!
//! Each struct is declared once, with `uniform!`, which also lists its
//! members for [`Uniform::FIELDS`] and names the shaders that declare its
//! WGSL twin (`struct Params` at `@group(0) @binding(0)`). The test below
//! parses every shader of `wgsl/` with naga and checks that the member
//! names, offsets and types and the struct's size are the Rust struct's, so
//! a member added, removed or moved on one side only fails it. Padding
//! members are named `pad<word>` on both sides and are written as 0.

use bytemuck::{Pod, Zeroable};

/// A kernel uniform mirrored by a WGSL struct.
pub trait Uniform: Pod {
    /// Name of the WGSL struct.
    const WGSL_STRUCT: &'static str;
    /// The shaders (files of `wgsl/`) whose uniform it is.
    const SHADERS: &'static [&'static str];
    /// Member names and byte offsets, in declaration order (every member
    /// is a `u32`).
    const FIELDS: &'static [(&'static str, usize)];
}

/// Declare a uniform struct of `u32` members and its [`Uniform`] impl.
macro_rules! uniform {
    (
        $(#[$meta:meta])*
        $name:ident = $wgsl:literal in [$($shader:literal),+ $(,)?] {
            $($(#[$fmeta:meta])* $field:ident),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: u32,)+
        }

        impl Uniform for $name {
            const WGSL_STRUCT: &'static str = $wgsl;
            const SHADERS: &'static [&'static str] = &[$($shader),+];
            const FIELDS: &'static [(&'static str, usize)] =
                &[$((stringify!($field), std::mem::offset_of!($name, $field))),+];
        }
    };
}

uniform! {
    /// The MPC kernels' uniform ([`super::mpc`]).
    MpcUniform = "Params" in ["mpc_compress.wgsl", "mpc_decompress.wgsl"] {
        /// Blocks (compress) or segments (decompress) of the dispatch.
        n,
        /// Header bits (the model ID's width).
        h,
        /// Predictors.
        np,
        /// Bit 0: zero-block model, bit 1: same-words model, bit 2: exact
        /// selection.
        flags,
        /// Model ID of predictor 0.
        pred_id0,
        /// Model ID of the raw escape.
        raw_id,
        /// Widest code in bits.
        max_bits,
        /// Words in one compress slot.
        slot_words,
    }
}

uniform! {
    /// The MAG-aware BDI kernels' uniform ([`super::magbdi`]).
    MagBdiUniform = "Params" in ["magbdi_compress.wgsl", "magbdi_decompress.wgsl"] {
        /// Blocks (compress) or segments (decompress) of the dispatch.
        n,
        /// 4-byte values in a block.
        vals,
        /// Bits of the encoding field.
        ebits,
        /// Encodings in the size table (the raw encoding's code).
        sizes,
        /// 1: signed deltas, 0: unsigned.
        signed_mode,
        /// Words in one compress slot.
        slot_words,
        pad6,
        pad7,
    }
}

uniform! {
    /// The DPC kernels' uniform ([`super::dpc`]).
    DpcUniform = "Params" in ["dpc_compress.wgsl", "dpc_decompress.wgsl"] {
        /// Blocks (compress) or segments (decompress) of the dispatch.
        n,
        /// 4-byte segments in a block.
        segs,
        /// Words in one compress slot.
        slot_words,
        pad3,
    }
}

uniform! {
    /// The chunk packing kernels' uniform (`chunk_scan`, `scatter`).
    PackUniform = "Params" in ["pack.wgsl", "scatter.wgsl"] {
        /// Blocks in the part.
        n,
        /// Blocks per chunk.
        chunk_blocks,
        /// Chunks in the part.
        chunks,
        /// Words in one compress slot.
        slot_words,
        /// Blocks per group length table field; 0: no table.
        group,
        /// Width of a table field in bits.
        width,
        pad6,
        pad7,
    }
}

uniform! {
    /// The `window_scan` kernel's uniform.
    ScanUniform = "Params" in ["window_scan.wgsl"] {
        /// Chunks in the part.
        chunks,
        pad1,
        pad2,
        pad3,
    }
}

uniform! {
    /// The `plan` kernel's uniform (segments of device-resident chunks).
    PlanUniform = "Params" in ["plan_decompress.wgsl"] {
        /// Chunks in the part.
        chunks,
        /// Blocks per chunk.
        chunk_blocks,
        /// Blocks in the part.
        n,
        /// Blocks per length-table field; 0: no table.
        group,
        /// Width of a table field in bits.
        width,
        /// Widest code of one block in bits.
        max_bits,
        /// Segments of a whole chunk.
        fields,
        pad7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::{AddressSpace, Scalar, TypeInner};
    use std::path::Path;

    /// A uniform's name, WGSL struct, shaders, fields and size.
    struct Decl {
        rust: &'static str,
        wgsl: &'static str,
        shaders: &'static [&'static str],
        fields: &'static [(&'static str, usize)],
        size: usize,
    }

    fn decl<U: Uniform>() -> Decl {
        Decl {
            rust: std::any::type_name::<U>(),
            wgsl: U::WGSL_STRUCT,
            shaders: U::SHADERS,
            fields: U::FIELDS,
            size: std::mem::size_of::<U>(),
        }
    }

    fn decls() -> Vec<Decl> {
        vec![
            decl::<MpcUniform>(),
            decl::<MagBdiUniform>(),
            decl::<DpcUniform>(),
            decl::<PackUniform>(),
            decl::<ScanUniform>(),
            decl::<PlanUniform>(),
        ]
    }

    /// A shader as the engine compiles it: compress and decompress modules
    /// with their bit writer or reader in front (the kernel contract).
    fn module(file: &str, text: &str) -> naga::Module {
        let src = if file.ends_with("_decompress.wgsl") {
            format!("{}\n{text}", crate::gpu::BITS_READ)
        } else if file.ends_with("_compress.wgsl") {
            format!("{}\n{text}", crate::gpu::BITS_WRITE)
        } else {
            text.to_string()
        };
        naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{file}: {}", e.emit_to_string(&src)))
    }

    /// The members (name, offset) and size of the struct bound as the
    /// uniform at group 0, binding 0 of `m`, and its name.
    fn wgsl_uniform(file: &str, m: &naga::Module) -> (String, Vec<(String, usize)>, usize) {
        let mut uniforms = m
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == AddressSpace::Uniform);
        let (_, g) = uniforms
            .next()
            .unwrap_or_else(|| panic!("{file}: no uniform"));
        assert!(uniforms.next().is_none(), "{file}: more than one uniform");
        let b = g.binding.as_ref().expect("uniform binding");
        assert_eq!((b.group, b.binding), (0, 0), "{file}: uniform binding");
        let ty = &m.types[g.ty];
        let TypeInner::Struct { members, span } = &ty.inner else {
            panic!("{file}: the uniform is not a struct: {:?}", ty.inner);
        };
        let fields = members
            .iter()
            .map(|mb| {
                let name = mb.name.clone().unwrap_or_default();
                assert_eq!(
                    m.types[mb.ty].inner,
                    TypeInner::Scalar(Scalar::U32),
                    "{file}: member {name} is not a u32"
                );
                (name, mb.offset as usize)
            })
            .collect();
        (ty.name.clone().unwrap_or_default(), fields, *span as usize)
    }

    #[test]
    fn uniform_layouts_match_their_wgsl_structs() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/wgsl");
        let decls = decls();
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("wgsl directory")
            .map(|e| {
                e.expect("wgsl entry")
                    .file_name()
                    .into_string()
                    .expect("name")
            })
            .filter(|f| f.ends_with(".wgsl"))
            .collect();
        files.sort();
        let mut checked = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(dir.join(file)).expect("shader");
            let owner = decls.iter().find(|d| d.shaders.contains(&file.as_str()));
            if !text.contains("var<uniform>") {
                assert!(owner.is_none(), "{file} has no uniform");
                continue;
            }
            let d = owner.unwrap_or_else(|| panic!("{file}: no Rust struct names it"));
            let (name, fields, size) = wgsl_uniform(file, &module(file, &text));
            let rust: Vec<(String, usize)> =
                d.fields.iter().map(|&(n, o)| (n.to_string(), o)).collect();
            assert_eq!(name, d.wgsl, "{file}: struct name ({})", d.rust);
            assert_eq!(fields, rust, "{file}: members of {} vs {}", d.wgsl, d.rust);
            assert_eq!(size, d.size, "{file}: size of {} vs {}", d.wgsl, d.rust);
            checked.push(file.as_str());
        }
        for d in &decls {
            // every member a u32, none left out of the field list
            assert_eq!(d.size, 4 * d.fields.len(), "{}", d.rust);
            for s in d.shaders {
                assert!(checked.contains(s), "{}: {s} not checked", d.rust);
            }
        }
    }

    #[test]
    fn shared_struct_declarations_are_identical() {
        // a struct that two shaders share is one text in both
        for d in decls() {
            let texts: Vec<String> = d
                .shaders
                .iter()
                .map(|s| {
                    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/wgsl");
                    let text = std::fs::read_to_string(dir.join(s)).expect("shader");
                    let at = text
                        .find(&format!("struct {} ", d.wgsl))
                        .unwrap_or_else(|| panic!("{s}: struct {}", d.wgsl));
                    let end = text[at..].find('}').expect("struct end");
                    text[at..=at + end].to_string()
                })
                .collect();
            for (s, t) in d.shaders.iter().zip(&texts) {
                assert_eq!(t, &texts[0], "{s} vs {}", d.shaders[0]);
            }
        }
    }

    #[test]
    fn algorithm_params_are_the_words_after_n() {
        let u = DpcUniform {
            n: 9,
            segs: 8,
            slot_words: 3,
            pad3: 0,
        };
        assert_eq!(crate::gpu::GpuAlgo::params_of(&u), vec![8, 3, 0]);
        assert_eq!(bytemuck::bytes_of(&u).len(), 16);
    }
}
