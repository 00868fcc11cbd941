//! What the launcher of each Triton release does, read from its
//! `driver.py` (the C launcher it generates, 3.0-3.6) and `driver.c` (the
//! one launcher, 3.7-3.9), and checked call for call against each release
//! by `tests/python/triton_launch_diff.py`:
//!
//! | release | hidden parameters           | scratch per program ×  | launch                                  | cluster               |
//! |---------|-----------------------------|------------------------|-----------------------------------------|-----------------------|
//! | 3.0-3.2 | none                        | -                      | `cuLaunchKernel` unless a cluster       | `cluster_dims`        |
//! | 3.3     | global scratch              | 1                      | `cuLaunchKernel` unless cluster or coop | `cluster_dims`        |
//! | 3.4     | global scratch              | `cluster_dims` product | `cuLaunchKernelEx`, PDL                 | `cluster_dims`        |
//! | 3.5     | global and profile scratch  | `cluster_dims` product | the same                                | `cluster_dims`        |
//! | 3.6-3.7 | global and profile scratch  | `num_ctas`             | the same                                | `num_ctas`, 16 non-portable |
//! | 3.8-3.9 | global and profile scratch  | `num_ctas`             | the same, oversized shared memory       | the same              |
//!
//! Up to 3.7 a kernel above 48 KiB of shared memory is set up at load with
//! the cache preference and the dynamic shared memory limit; from 3.8 on
//! with the shared memory mode, those two being the fallback. Releases
//! before 3.3 record no `triton_version`: a metadata with neither it nor a
//! global scratch size is of 3.0-3.2, whose launchers are the same.

use crate::module::format::triton_cache::{Metadata, Scratch};
use crate::runtime::model::error::{Error, Result};

/// The oldest and newest minor release of Triton 3 whose launch is known.
const KNOWN: (u32, u32) = (0, 9);

/// The launch rules of the release that compiled a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The minor version of Triton 3 (2 for the 3.0-3.2 family).
    minor: u32,
}

impl Release {
    /// The release `meta` was compiled by, refused (naming the release and
    /// what is missing) where its launcher is not known here or the
    /// metadata lacks what that launcher reads.
    pub fn of(meta: &Metadata) -> Result<Release> {
        let who = format!("Triton kernel {}", meta.name);
        let release = if meta.triton_version.is_empty() {
            if meta.global_scratch.is_some() || meta.profile_scratch.is_some() {
                return Err(Error::value(format!(
                    "{who}: the metadata has scratch sizes but no triton_version (Triton 3.3 \
                     and later record it; 3.0-3.2 have no scratch)"
                )));
            }
            Release { minor: 2 }
        } else {
            let mut parts = meta.triton_version.split('.');
            let major = parts.next().and_then(|p| p.parse::<u32>().ok());
            let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
            match (major, minor) {
                (Some(3), Some(minor)) if (KNOWN.0..=KNOWN.1).contains(&minor) => Release {
                    minor: minor.max(2),
                },
                _ => {
                    return Err(Error::value(format!(
                        "{who} is of Triton {}: the launch (hidden parameters, launch \
                         attributes) is known here for Triton 3.{}-3.{} only",
                        meta.triton_version, KNOWN.0, KNOWN.1
                    )));
                }
            }
        };
        let lacks = |field: &str| {
            Error::value(format!(
                "{who}: the metadata of Triton {} has no {field}, which its launcher reads",
                meta.release()
            ))
        };
        if release.hidden() >= 1 && meta.global_scratch.is_none() {
            return Err(lacks("global_scratch_size"));
        }
        if release.hidden() >= 2 && meta.profile_scratch.is_none() {
            return Err(lacks("profile_scratch_size"));
        }
        if release.minor <= 5 && meta.cluster_dims.is_none() {
            return Err(lacks("cluster_dims"));
        }
        Ok(release)
    }

    /// How many hidden trailing pointers the launcher appends.
    pub fn hidden(self) -> usize {
        match self.minor {
            ..=2 => 0,
            3 | 4 => 1,
            _ => 2,
        }
    }

    /// The scratch buffers the launcher allocates, in parameter order.
    pub fn scratches(self, meta: &Metadata) -> [Option<Scratch>; 2] {
        // Only those the release appends: a profile scratch in a 3.3 or 3.4
        // metadata is not read by its launcher.
        [
            meta.global_scratch.filter(|_| self.hidden() >= 1),
            meta.profile_scratch.filter(|_| self.hidden() >= 2),
        ]
    }

    /// Programs per grid cell a scratch buffer is sized for.
    pub fn scratch_programs_per_cell(self, meta: &Metadata) -> u64 {
        match self.minor {
            ..=3 => 1,
            4 | 5 => self.cluster(meta).iter().map(|&d| u64::from(d)).product(),
            _ => u64::from(meta.num_ctas),
        }
    }

    /// The cluster's shape; the grid is multiplied by it where `num_ctas`
    /// is more than 1.
    pub fn cluster(self, meta: &Metadata) -> [u32; 3] {
        match (self.minor, meta.cluster_dims) {
            (..=5, Some(dims)) => dims,
            _ => [meta.num_ctas, 1, 1],
        }
    }

    /// Whether a launch needing no attribute goes through `cuLaunchKernel`.
    pub fn plain_launch(self) -> bool {
        self.minor <= 3
    }

    /// Whether the launcher reads `launch_cooperative_grid`.
    pub fn cooperative(self) -> bool {
        self.minor >= 3
    }

    /// Whether the launcher reads `launch_pdl`.
    pub fn programmatic(self) -> bool {
        self.minor >= 4
    }

    /// Whether the cooperative attribute comes after the cluster's (3.3)
    /// rather than before it.
    pub fn cooperative_last(self) -> bool {
        self.minor <= 3
    }

    /// Whether a cluster of 16 is allowed as non-portable first.
    pub fn non_portable_16(self) -> bool {
        self.minor >= 6
    }

    /// Whether launches above 228 KiB of shared memory ask for oversized
    /// shared memory, and the load raises the shared memory mode.
    pub fn shared_memory_mode(self) -> bool {
        self.minor >= 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::format::triton_cache::parse_metadata;

    fn meta(fields: &str) -> Metadata {
        parse_metadata(
            format!(r#"{{"name": "k", "target": {{"backend": "cuda", "arch": 90}}, "num_warps": 4, "shared": 0{fields}}}"#)
                .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn each_release_is_known_or_refused_by_name() {
        let old = meta(r#", "cluster_dims": [1, 1, 1]"#);
        assert_eq!(Release::of(&old).unwrap().hidden(), 0);
        for (fields, says) in [
            (
                r#", "triton_version": "3.10.0""#,
                "is of Triton 3.10.0: the launch (hidden parameters, launch attributes) is known here for Triton 3.0-3.9 only",
            ),
            (r#", "triton_version": "2.3.1""#, "is of Triton 2.3.1"),
            (
                r#", "triton_version": "3.5.1", "cluster_dims": [1, 1, 1], "global_scratch_size": 0"#,
                "the metadata of Triton 3.5.1 has no profile_scratch_size, which its launcher reads",
            ),
            (
                r#", "triton_version": "3.4.0", "global_scratch_size": 0"#,
                "has no cluster_dims",
            ),
            (
                r#", "global_scratch_size": 0, "cluster_dims": [1, 1, 1]"#,
                "scratch sizes but no triton_version",
            ),
        ] {
            let e = Release::of(&meta(fields)).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let r = Release::of(&meta(r#", "triton_version": "3.5.1", "num_ctas": 2, "cluster_dims": [2, 1, 1], "global_scratch_size": 8, "profile_scratch_size": 0"#)).unwrap();
        let m = meta(
            r#", "triton_version": "3.5.1", "num_ctas": 2, "cluster_dims": [2, 1, 1], "global_scratch_size": 8, "profile_scratch_size": 0"#,
        );
        assert_eq!(
            (r.hidden(), r.scratch_programs_per_cell(&m), r.cluster(&m)),
            (2, 2, [2, 1, 1])
        );
    }
}
