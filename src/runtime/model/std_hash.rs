//! `std::hash<std::string_view>` as the C++ standard library the reference
//! is built with computes it: the reference stores it as each type's
//! `type_key_hash`, so ours must give the same number on the same
//! platform. libstdc++ on Linux (and wherever else GCC's library is the
//! norm), libc++ on Apple's platforms, MSVC's on Windows.

/// The platform's `std::hash<std::string_view>` of `bytes`: on Windows
/// that of MSVC's library, which the reference is built with there.
pub fn string_hash(bytes: &[u8]) -> u64 {
    if cfg!(target_vendor = "apple") {
        libcxx(bytes)
    } else if cfg!(windows) {
        msvc(bytes)
    } else {
        libstdcxx(bytes)
    }
}

/// MSVC's `std::hash<std::string_view>` on 64-bit targets: FNV-1a over the
/// bytes (`_Fnv1a_append_bytes`).
pub fn msvc(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// libstdc++'s `std::hash<std::string_view>` on 64-bit targets
/// (`_Hash_bytes` with seed 0xc70f6907).
pub fn libstdcxx(bytes: &[u8]) -> u64 {
    const MUL: u64 = (0xc6a4_a793u64 << 32) + 0x5bd1_e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut hash = 0xc70f_6907u64 ^ (bytes.len() as u64).wrapping_mul(MUL);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let data = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        hash ^= shift_mix(data.wrapping_mul(MUL)).wrapping_mul(MUL);
        hash = hash.wrapping_mul(MUL);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let data = rest
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

/// libc++'s `std::hash<std::string_view>` on 64-bit targets, ABI version 1
/// (Apple's): CityHash64 as `__murmur2_or_cityhash<size_t, 64>` has it,
/// including the 4-to-8-byte case that shifts a 32-bit word left by 3 in
/// 32 bits (`_LIBCPP_ABI_FIX_CITYHASH_IMPLEMENTATION` is ABI 2's).
pub fn libcxx(s: &[u8]) -> u64 {
    let len = s.len() as u64;
    if s.len() <= 16 {
        city::len_0_to_16(s)
    } else if s.len() <= 32 {
        city::len_17_to_32(s)
    } else if s.len() <= 64 {
        city::len_33_to_64(s)
    } else {
        city::long(s, len)
    }
}

/// The pieces of libc++'s CityHash64.
mod city {
    pub(super) const K0: u64 = 0xc3a5_c85c_97cb_3127;
    pub(super) const K1: u64 = 0xb492_b66f_be98_f273;
    pub(super) const K2: u64 = 0x9ae1_6a3b_2f90_404f;
    pub(super) const K3: u64 = 0xc949_d7c7_509e_6557;

    pub(super) fn word(s: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"))
    }
    fn word32(s: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(s[at..at + 4].try_into().expect("4 bytes"))
    }
    /// `__rotate`: no rotation for a shift of 0.
    pub(super) fn rotate(v: u64, shift: u32) -> u64 {
        if shift == 0 { v } else { v.rotate_right(shift) }
    }
    pub(super) fn shift_mix(v: u64) -> u64 {
        v ^ (v >> 47)
    }
    pub(super) fn len_16(u: u64, v: u64) -> u64 {
        const MUL: u64 = 0x9ddf_ea08_eb38_2d69;
        let mut a = (u ^ v).wrapping_mul(MUL);
        a ^= a >> 47;
        let mut b = (v ^ a).wrapping_mul(MUL);
        b ^= b >> 47;
        b.wrapping_mul(MUL)
    }
    pub(super) fn len_0_to_16(s: &[u8]) -> u64 {
        let len = s.len();
        if len > 8 {
            let (a, b) = (word(s, 0), word(s, len - 8));
            // `__rotate_by_at_least_1`: len is 9..=16 here.
            return len_16(a, b.wrapping_add(len as u64).rotate_right(len as u32)) ^ b;
        }
        if len >= 4 {
            let (a, b) = (word32(s, 0), word32(s, len - 4));
            return len_16(
                (len as u64).wrapping_add(u64::from(a.wrapping_shl(3))),
                u64::from(b),
            );
        }
        if len > 0 {
            let (a, b, c) = (
                u32::from(s[0]),
                u32::from(s[len >> 1]),
                u32::from(s[len - 1]),
            );
            let y = a.wrapping_add(b << 8);
            let z = (len as u32).wrapping_add(c << 2);
            return shift_mix(u64::from(y).wrapping_mul(K2) ^ u64::from(z).wrapping_mul(K3))
                .wrapping_mul(K2);
        }
        K2
    }
    pub(super) fn len_17_to_32(s: &[u8]) -> u64 {
        let len = s.len();
        let a = word(s, 0).wrapping_mul(K1);
        let b = word(s, 8);
        let c = word(s, len - 8).wrapping_mul(K2);
        let d = word(s, len - 16).wrapping_mul(K0);
        len_16(
            rotate(a.wrapping_sub(b), 43)
                .wrapping_add(rotate(c, 30))
                .wrapping_add(d),
            a.wrapping_add(rotate(b ^ K3, 20))
                .wrapping_sub(c)
                .wrapping_add(len as u64),
        )
    }
    pub(super) fn len_33_to_64(s: &[u8]) -> u64 {
        let len = s.len();
        let mut z = word(s, 24);
        let mut a = word(s, 0).wrapping_add(
            (len as u64)
                .wrapping_add(word(s, len - 16))
                .wrapping_mul(K0),
        );
        let mut b = rotate(a.wrapping_add(z), 52);
        let mut c = rotate(a, 37);
        a = a.wrapping_add(word(s, 8));
        c = c.wrapping_add(rotate(a, 7));
        a = a.wrapping_add(word(s, 16));
        let vf = a.wrapping_add(z);
        let vs = b.wrapping_add(rotate(a, 31)).wrapping_add(c);
        a = word(s, 16).wrapping_add(word(s, len - 32));
        z = z.wrapping_add(word(s, len - 8));
        b = rotate(a.wrapping_add(z), 52);
        c = rotate(a, 37);
        a = a.wrapping_add(word(s, len - 24));
        c = c.wrapping_add(rotate(a, 7));
        a = a.wrapping_add(word(s, len - 16));
        let wf = a.wrapping_add(z);
        let ws = b.wrapping_add(rotate(a, 31)).wrapping_add(c);
        let r = shift_mix(
            vf.wrapping_add(ws)
                .wrapping_mul(K2)
                .wrapping_add(wf.wrapping_add(vs).wrapping_mul(K0)),
        );
        shift_mix(r.wrapping_mul(K0).wrapping_add(vs)).wrapping_mul(K2)
    }
    /// `__weak_hash_len_32_with_seeds` of the 32 bytes at `at`.
    fn weak_32(s: &[u8], at: usize, a: u64, b: u64) -> (u64, u64) {
        let (w, x, y, z) = (
            word(s, at),
            word(s, at + 8),
            word(s, at + 16),
            word(s, at + 24),
        );
        let mut a = a.wrapping_add(w);
        let mut b = rotate(b.wrapping_add(a).wrapping_add(z), 21);
        let c = a;
        a = a.wrapping_add(x).wrapping_add(y);
        b = b.wrapping_add(rotate(a, 44));
        (a.wrapping_add(z), b.wrapping_add(c))
    }
    /// Over 64 bytes: the end first, then 64-byte chunks.
    pub(super) fn long(s: &[u8], len: u64) -> u64 {
        let n = s.len();
        let mut x = word(s, n - 40);
        let mut y = word(s, n - 16).wrapping_add(word(s, n - 56));
        let mut z = len_16(word(s, n - 48).wrapping_add(len), word(s, n - 24));
        let mut v = weak_32(s, n - 64, len, z);
        let mut w = weak_32(s, n - 32, y.wrapping_add(K1), x);
        x = x.wrapping_mul(K1).wrapping_add(word(s, 0));
        let mut at = 0;
        let mut left = (len - 1) & !63;
        loop {
            x = rotate(
                x.wrapping_add(y)
                    .wrapping_add(v.0)
                    .wrapping_add(word(s, at + 8)),
                37,
            )
            .wrapping_mul(K1);
            y = rotate(y.wrapping_add(v.1).wrapping_add(word(s, at + 48)), 42).wrapping_mul(K1);
            x ^= w.1;
            y = y.wrapping_add(v.0).wrapping_add(word(s, at + 40));
            z = rotate(z.wrapping_add(w.0), 33).wrapping_mul(K1);
            v = weak_32(s, at, v.1.wrapping_mul(K1), x.wrapping_add(w.0));
            w = weak_32(
                s,
                at + 32,
                z.wrapping_add(w.1),
                y.wrapping_add(word(s, at + 16)),
            );
            core::mem::swap(&mut z, &mut x);
            at += 64;
            left -= 64;
            if left == 0 {
                break;
            }
        }
        len_16(
            len_16(v.0, w.0)
                .wrapping_add(shift_mix(y).wrapping_mul(K1))
                .wrapping_add(z),
            len_16(v.1, w.1).wrapping_add(x),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libstdcxx_matches_the_official_linux_library() {
        // Values read from the official library's TVMFFITypeInfo records.
        assert_eq!(libstdcxx(b"ffi.Object"), 0x33a2_11b2_74fa_0106);
        assert_eq!(libstdcxx(b"None"), 0xfb6a_c968_ce0c_a5aa);
        assert_eq!(libstdcxx(b"TVMFFIByteArray*"), 0x3251_9e4e_9ab6_31a9);
    }

    #[test]
    fn msvc_matches_the_official_windows_library() {
        // Values read from the official tvm_ffi.dll's TVMFFITypeInfo
        // records (win_amd64 wheel, under Wine).
        assert_eq!(msvc(b"None"), 0x669b_18c6_d2d9_c95b);
        assert_eq!(msvc(b"ffi.Object"), 0x7827_e2c9_c708_4445);
        assert_eq!(msvc(b"TVMFFIByteArray*"), 0xfa7a_9cc0_34aa_fa4e);
    }

    #[test]
    fn libcxx_matches_libcxx_abi_1() {
        // `std::hash<std::string_view>` printed by a program built against
        // libc++ with ABI version 1, Apple's (zig c++, x86_64-linux).
        let cases: &[(&[u8], u64)] = &[
            (b"", 0x9ae16a3b2f90404f),
            (b"a", 0x2420662cd003acfa),
            (b"ab", 0x17f0a30ff3cc3f3e),
            (b"abc", 0x3a912f483a4ece31),
            (b"None", 0x019a8be81f00f2d3),
            (b"int", 0xb0e8750151c24421),
            (b"ffi.Object", 0x617c27fa8bda45a2),
            (b"ffi.String", 0x9c578301776a7507),
            (b"TVMFFIByteArray*", 0x208903b0dfacb726),
            (b"0123456789abcdef0", 0x4c46d90b3f165aeb),
            (b"ffi.reflection.AccessPath", 0x9220c36580da0705),
            (b"0123456789abcdef0123456789abcdef", 0x186c0e3ffd9476f6),
            (b"0123456789abcdef0123456789abcdef0", 0x3ac347b355bc3c0c),
            (b"ffi.reflection.AccessStep.some.longer.key.name", 0xde6d25fe7878c6c3),
            (b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 0x46a5e385b634344c),
            (b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdefX", 0x796cb1fb3525e612),
            (
                b"a considerably longer type key that spans well over one hundred and twenty eight bytes, \
                  to run the 64-byte loop twice or more",
                0x2871adb3855899a8,
            ),
        ];
        for (key, want) in cases {
            assert_eq!(libcxx(key), *want, "{}", String::from_utf8_lossy(key));
        }
    }
}
