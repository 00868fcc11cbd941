//! The `REPEAT` inputs of the fuzz targets that check linear-time parsing:
//! `REPEAT` + a little-endian u32 `n` + at most 64 bytes stands for
//! `before` then those bytes repeated `n` times (at most 200,000).

use std::borrow::Cow;

/// `data` itself, or what a `REPEAT` input stands for.
pub fn expand<'a>(data: &'a [u8], before: &[u8]) -> Cow<'a, [u8]> {
    match data.strip_prefix(b"REPEAT") {
        Some(rest) if rest.len() >= 4 && rest.len() <= 68 => {
            let n = u32::from_le_bytes(rest[..4].try_into().unwrap()).min(200_000);
            Cow::Owned([before, &rest[4..].repeat(n as usize)].concat())
        }
        _ => Cow::Borrowed(data),
    }
}
