//! The wgpu device of the GPU engine: adapter selection, buffers, compute
//! pipelines and blocking dispatch/readback helpers.
//!
//! Every kernel of the engine is a WGSL compute shader with
//! `@workgroup_size(64)` whose thread index is
//! `gid.x + gid.y * nwg.x * 64` (`nwg` = `@builtin(num_workgroups)`): grids
//! larger than 65,535 workgroups are dispatched in two dimensions.

use std::sync::mpsc;

use wgpu::util::DeviceExt;

use super::super::BulkError;

/// A write-only view of a range of mapped memory, moved to a pool thread.
struct SendWriteOnly<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: a `WriteOnly<[u8]>` is a unique pointer to a byte range of a
// mapped buffer, like `&mut [u8]`, which is `Send`; wgpu's own `Send` impl
// only covers sized element types. The ranges handed out are disjoint
// (`split_at`), and the mapping outlives the parallel copy.
unsafe impl Send for SendWriteOnly<'_> {}

/// Threads per workgroup of every kernel.
pub const WORKGROUP: u32 = 64;

/// One adapter as the engine describes it to users.
#[derive(Clone, Debug)]
pub struct AdapterDesc {
    pub name: String,
    pub backend: String,
    pub device_type: wgpu::DeviceType,
    pub driver: String,
}

impl AdapterDesc {
    fn of(info: &wgpu::AdapterInfo) -> Self {
        AdapterDesc {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: info.device_type,
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        }
    }

    /// A software rasteriser (llvmpipe, SwiftShader, WARP): correct, never fast.
    pub fn is_software(&self) -> bool {
        self.device_type == wgpu::DeviceType::Cpu
    }

    fn kind(&self) -> &'static str {
        match self.device_type {
            wgpu::DeviceType::DiscreteGpu => "discrete GPU",
            wgpu::DeviceType::IntegratedGpu => "integrated GPU",
            wgpu::DeviceType::VirtualGpu => "virtual GPU",
            wgpu::DeviceType::Cpu => "software (CPU)",
            wgpu::DeviceType::Other => "other",
        }
    }
}

impl std::fmt::Display for AdapterDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.backend, self.kind())
    }
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = wgpu::Backends::PRIMARY;
    wgpu::Instance::new(desc)
}

/// Every adapter wgpu finds (Vulkan, Metal or DX12).
pub fn adapters() -> Vec<AdapterDesc> {
    let inst = instance();
    pollster::block_on(inst.enumerate_adapters(wgpu::Backends::PRIMARY))
        .iter()
        .map(|a| AdapterDesc::of(&a.get_info()))
        .collect()
}

/// Preference order: discrete, integrated, virtual, other, software.
fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// An open device with its queue.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterDesc,
    pub limits: wgpu::Limits,
}

fn gpu_err(what: impl std::fmt::Display) -> BulkError {
    BulkError::Gpu(what.to_string())
}

impl Gpu {
    /// Open the best adapter (discrete first, software last), or the first
    /// whose name contains `pick` (case-insensitive) or whose position in
    /// [`adapters`] is `pick`.
    pub fn open(pick: Option<&str>) -> Result<Gpu, BulkError> {
        let inst = instance();
        let mut found = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::PRIMARY));
        let descs: Vec<AdapterDesc> = found
            .iter()
            .map(|a| AdapterDesc::of(&a.get_info()))
            .collect();
        let list = || {
            if descs.is_empty() {
                "none".to_string()
            } else {
                descs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| format!("[{i}] {d}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let idx = match pick {
            Some(p) => {
                let lower = p.to_lowercase();
                let by_pos = p.parse::<usize>().ok().filter(|&i| i < descs.len());
                by_pos
                    .or_else(|| {
                        descs
                            .iter()
                            .position(|d| d.name.to_lowercase().contains(&lower))
                    })
                    .ok_or_else(|| {
                        gpu_err(format!(
                            "no GPU adapter matches `{p}`; adapters found: {}",
                            list()
                        ))
                    })?
            }
            None => (0..descs.len())
                .min_by_key(|&i| rank(descs[i].device_type))
                .ok_or_else(|| {
                    gpu_err(format!(
                        "no GPU adapter found (Vulkan, Metal or DX12); adapters found: {} \
                         (on Linux without a GPU, install Mesa's software driver: \
                         apt-get install mesa-vulkan-drivers)",
                        list()
                    ))
                })?,
        };
        let adapter = found.swap_remove(idx);
        let desc = descs[idx].clone();
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("mpcgen bulk"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| gpu_err(format!("{desc}: cannot open device: {e}")))?;
        Ok(Gpu {
            device,
            queue,
            adapter: desc,
            limits,
        })
    }

    /// Largest storage buffer binding, in bytes.
    pub fn max_binding(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    /// Compile `source` and build the pipeline of `entry` (bind group 0,
    /// layout taken from the shader). Shader errors become `BulkError::Gpu`.
    pub fn pipeline(
        &self,
        label: &str,
        source: &str,
        entry: &str,
    ) -> Result<wgpu::ComputePipeline, BulkError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let p = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(gpu_err(format!("kernel {label}::{entry}: {e}")));
        }
        Ok(p)
    }

    /// A storage buffer of `bytes` (rounded up to 4, at least 4) that can
    /// be copied to and from.
    pub fn storage(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// A storage buffer holding `words`.
    pub fn storage_init(&self, label: &str, words: &[u32]) -> wgpu::Buffer {
        let one = [0u32];
        let words = if words.is_empty() { &one[..] } else { words };
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
            })
    }

    /// A uniform buffer holding `bytes` (zero-padded to a 16-byte
    /// multiple), e.g. `bytemuck::bytes_of` of a
    /// [`Uniform`](super::uniform::Uniform).
    pub fn uniform(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        let mut b = bytes.to_vec();
        b.resize(bytes.len().next_multiple_of(16).max(16), 0);
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &b,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            })
    }

    /// A host-readable staging buffer.
    pub fn readback(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A host-writable staging buffer (uploads: filled while mapped, then
    /// copied to a storage buffer by the device).
    pub fn upload_staging(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// Fill the first `len` bytes of the upload staging buffer `staging`
    /// (not in use by the device) with `pieces` (offset, bytes; ascending,
    /// not overlapping; the gaps and the tail become zeros), copying the
    /// pieces in parallel on the rayon pool.
    pub fn stage(
        &self,
        staging: &wgpu::Buffer,
        len: u64,
        pieces: &[(usize, &[u8])],
    ) -> Result<(), BulkError> {
        use rayon::prelude::*;
        let len4 = len.max(4).next_multiple_of(4);
        let slice = staging.slice(..len4);
        self.map_ready(&slice, wgpu::MapMode::Write, "an upload buffer")?;
        {
            let mut view = slice
                .get_mapped_range_mut()
                .map_err(|e| gpu_err(format!("writing an upload buffer: {e}")))?;
            let mut rest = view.slice(..);
            let mut at = 0usize;
            let mut jobs = Vec::with_capacity(pieces.len());
            let mut gaps = Vec::new();
            for &(off, src) in pieces {
                if off < at || off + src.len() > len4 as usize {
                    return Err(gpu_err("upload pieces overlap or exceed the buffer"));
                }
                let (gap, tail) = rest.split_at(off - at);
                let (dst, tail) = tail.split_at(src.len());
                gaps.push(gap);
                jobs.push((SendWriteOnly(dst), src));
                rest = tail;
                at = off + src.len();
            }
            gaps.push(rest);
            jobs.into_par_iter()
                .for_each(|(mut d, s)| d.0.copy_from_slice(s));
            for mut g in gaps {
                g.fill(0);
            }
        }
        staging.unmap();
        Ok(())
    }

    /// A bind group of `buffers` at bindings 0, 1, ... for `pipeline`.
    pub fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// A bind group of `resources` (whole buffers or ranges of them) at
    /// bindings 0, 1, ... for `pipeline`.
    pub fn bind_resources(
        &self,
        pipeline: &wgpu::ComputePipeline,
        resources: &[wgpu::BindingResource<'_>],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: r.clone(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Record a dispatch of `threads` threads (workgroups of [`WORKGROUP`],
    /// two-dimensional above 65,535 workgroups).
    pub fn dispatch(
        enc: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        threads: u64,
    ) {
        Self::dispatch_groups(enc, pipeline, group, threads.div_ceil(WORKGROUP as u64));
    }

    /// Record a dispatch of `groups` workgroups (two-dimensional above 65,535).
    pub fn dispatch_groups(
        enc: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        groups: u64,
    ) {
        if groups == 0 {
            return;
        }
        let x = groups.min(65_535);
        let y = groups.div_ceil(x);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x as u32, y as u32, 1);
    }

    /// Submit `enc` and wait for it to finish.
    pub fn submit_wait(&self, enc: wgpu::CommandEncoder) -> Result<(), BulkError> {
        self.wait(self.queue.submit([enc.finish()]))
    }

    /// Wait for submission `idx` (and those before it) to finish; later
    /// submissions may still run.
    pub fn wait(&self, idx: wgpu::SubmissionIndex) -> Result<(), BulkError> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(idx),
                timeout: None,
            })
            .map_err(gpu_err)?;
        Ok(())
    }

    /// Map `slice` of a buffer the device no longer uses (its last
    /// submission has been waited for) without waiting for later
    /// submissions: the device is polled without blocking until the mapping
    /// is done, so that other work stays in flight meanwhile.
    fn map_ready(
        &self,
        slice: &wgpu::BufferSlice<'_>,
        mode: wgpu::MapMode,
        what: &str,
    ) -> Result<(), BulkError> {
        let (tx, rx) = mpsc::channel();
        slice.map_async(mode, move |r| {
            let _ = tx.send(r);
        });
        let mut spins = 0u32;
        let r = loop {
            self.device.poll(wgpu::PollType::Poll).map_err(gpu_err)?;
            match rx.try_recv() {
                Ok(r) => break r,
                Err(mpsc::TryRecvError::Empty) => {
                    spins += 1;
                    if spins < 64 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                }
                Err(e) => return Err(gpu_err(format!("mapping {what}: {e}"))),
            }
        };
        r.map_err(|e| gpu_err(format!("mapping {what}: {e}")))
    }

    /// Map `staging` (already filled by a finished submission) and copy its
    /// first `bytes` out into `out`.
    pub fn read_mapped(
        &self,
        staging: &wgpu::Buffer,
        bytes: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), BulkError> {
        out.clear();
        if bytes == 0 {
            return Ok(());
        }
        let len = bytes.next_multiple_of(4);
        let slice = staging.slice(..len);
        self.map_ready(&slice, wgpu::MapMode::Read, "a result buffer")?;
        {
            let view = slice
                .get_mapped_range()
                .map_err(|e| gpu_err(format!("reading a result buffer: {e}")))?;
            out.extend_from_slice(&view[..bytes as usize]);
        }
        staging.unmap();
        Ok(())
    }

    /// Map the first `bytes` of `staging` (filled by a finished
    /// submission), run `f` on them, unmap.
    pub fn with_mapped<R>(
        &self,
        staging: &wgpu::Buffer,
        bytes: u64,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, BulkError> {
        if bytes == 0 {
            return Ok(f(&[]));
        }
        let slice = staging.slice(..bytes.next_multiple_of(4));
        self.map_ready(&slice, wgpu::MapMode::Read, "a result buffer")?;
        let r = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| gpu_err(format!("reading a result buffer: {e}")))?;
            f(&view[..bytes as usize])
        };
        staging.unmap();
        Ok(r)
    }

    /// Copy `bytes` of `src` to the host (through a new staging buffer).
    pub fn read(&self, src: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>, BulkError> {
        let staging = self.readback("readback", bytes);
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, &staging, 0, bytes.next_multiple_of(4).max(4));
        self.submit_wait(enc)?;
        let mut out = Vec::new();
        self.read_mapped(&staging, bytes, &mut out)?;
        Ok(out)
    }

    /// [`read`](Self::read) as `u32` words.
    pub fn read_words(&self, src: &wgpu::Buffer, words: usize) -> Result<Vec<u32>, BulkError> {
        let b = self.read(src, 4 * words as u64)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// The skip rule of the workspace's tests (`MPCGEN_REQUIRE_GPU`,
/// `MPCGEN_SKIP_LOG`), shared with `hdl::prereq` and the fuzzer.
#[path = "../../../golden/tests/common/skip.rs"]
mod skip_rule;

/// The device for tests: the best adapter, or `None` when none opens. A
/// missing adapter skips the test by the workspace's one rule: with
/// `MPCGEN_REQUIRE_GPU=1` (exactly `1`) it panics, so that a broken driver
/// install cannot pass by skipping; otherwise a note on stderr and a line
/// in the file `MPCGEN_SKIP_LOG` names.
pub fn test_gpu() -> Option<Gpu> {
    match Gpu::open(None) {
        Ok(g) => Some(g),
        Err(e) => {
            skip_rule::skip(
                skip_rule::REQUIRE_GPU,
                "this GPU test",
                &format!("no GPU adapter opens: {e}"),
            );
            None
        }
    }
}
