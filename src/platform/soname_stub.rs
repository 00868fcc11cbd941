//! The soname stub: a minimal ELF shared object that carries a soname and
//! a dynamic symbol table of absolute symbols, and nothing else (no code,
//! no relocations, no initialisers).
//!
//! A runtime linked statically into a program (a Rust host on the runtime
//! rlib, a C program on `libtvm_ffi.a`) has no `libtvm_ffi.so` for an
//! extension's `NEEDED libtvm_ffi.so` to match, and its functions are not in
//! the program's dynamic symbol table. Loaded before the first extension,
//! the stub is that object: the loader matches the extension's `NEEDED` to
//! the stub's soname (so it searches no path and maps no other runtime)
//! and binds every ABI symbol to the stub's absolute value, the address of
//! the runtime's own definition in the program. glibc takes an absolute
//! symbol's value as is from 2.28 on; the loader checks that after mapping.

use object::elf;

/// One symbol of the stub: its name and the address it stands for.
pub struct AbiExport {
    /// The symbol name, as a C or C++ (mangled) caller spells it.
    pub name: &'static core::ffi::CStr,
    /// The address of the runtime's definition.
    pub addr: *const core::ffi::c_void,
    /// Whether the symbol is data (a vtable, typeinfo, a static) rather
    /// than a function.
    pub data: bool,
}

// SAFETY: an address and a name, both immutable; the address is never
// dereferenced here.
unsafe impl Sync for AbiExport {}

/// `e_machine` of the system this runtime is built for.
#[cfg(target_arch = "x86_64")]
const MACHINE: u16 = elf::EM_X86_64.0;
#[cfg(target_arch = "aarch64")]
const MACHINE: u16 = elf::EM_AARCH64.0;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const MACHINE: u16 = elf::EM_NONE.0;

const EHDR: usize = 64;
const PHDR: usize = 56;
const SYM: usize = 24;
const DYN: usize = 16;

/// The classic System V symbol hash (`DT_HASH`), which every ELF loader reads.
fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |h, &c| {
        let h = (h << 4).wrapping_add(u32::from(c));
        let g = h & 0xf000_0000;
        (h ^ (g >> 24)) & !g
    })
}

/// The bytes of a stub shared object with soname `soname` defining
/// `symbols` as absolute symbols of the addresses given (`(name, address,
/// data)`).
pub fn write(soname: &[u8], symbols: &[(&[u8], u64, bool)]) -> Vec<u8> {
    let count = symbols.len() + 1; // with the null symbol
    // .dynstr: "\0", the soname, each name.
    let mut strtab = vec![0u8];
    let mut name_at = |s: &[u8]| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(s);
        strtab.push(0);
        at
    };
    let soname_at = name_at(soname);
    let names: Vec<u32> = symbols.iter().map(|(n, _, _)| name_at(n)).collect();
    // .hash: one bucket per two symbols, chains through the symbol indices.
    let nbucket = (count / 2).max(1);
    let mut buckets = vec![0u32; nbucket];
    let mut chains = vec![0u32; count];
    for (i, (name, _, _)) in symbols.iter().enumerate().rev() {
        let b = sysv_hash(name) as usize % nbucket;
        chains[i + 1] = buckets[b];
        buckets[b] = (i + 1) as u32;
    }
    let phnum = 3;
    let hash_off = EHDR + phnum * PHDR;
    let sym_off = (hash_off + 4 * (2 + nbucket + count)).next_multiple_of(8);
    let str_off = sym_off + SYM * count;
    let dyn_off = (str_off + strtab.len()).next_multiple_of(8);
    let dynamic: [(u64, u64); 7] = [
        (elf::DT_SONAME.0 as u64, u64::from(soname_at)),
        (elf::DT_HASH.0 as u64, hash_off as u64),
        (elf::DT_STRTAB.0 as u64, str_off as u64),
        (elf::DT_SYMTAB.0 as u64, sym_off as u64),
        (elf::DT_STRSZ.0 as u64, strtab.len() as u64),
        (elf::DT_SYMENT.0 as u64, SYM as u64),
        (elf::DT_NULL.0 as u64, 0),
    ];
    let total = dyn_off + DYN * dynamic.len();

    let mut out = Vec::with_capacity(total);
    let u16s = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let u64s = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
    // The ELF header: 64-bit, little-endian, a shared object, no sections.
    out.extend_from_slice(&elf::ELFMAG);
    out.extend_from_slice(&[
        elf::ELFCLASS64.0,
        elf::ELFDATA2LSB.0,
        elf::EV_CURRENT.0,
        elf::ELFOSABI_NONE.0,
    ]);
    out.extend_from_slice(&[0; 8]);
    u16s(&mut out, elf::ET_DYN.0);
    u16s(&mut out, MACHINE);
    u32s(&mut out, elf::EV_CURRENT.0 as u32);
    u64s(&mut out, 0); // e_entry
    u64s(&mut out, EHDR as u64); // e_phoff
    u64s(&mut out, 0); // e_shoff
    u32s(&mut out, 0); // e_flags
    for v in [EHDR, PHDR, phnum, 64, 0, 0] {
        u16s(&mut out, v as u16); // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
    }
    // Program headers: one read-write segment (the loader adjusts the
    // dynamic section in place), the dynamic section, a stack that is not
    // executable.
    let phdr = |out: &mut Vec<u8>, kind: u32, off: usize, size: usize, align: u64| {
        u32s(out, kind);
        u32s(out, (elf::PF_R | elf::PF_W).0);
        for v in [
            off as u64,
            off as u64,
            off as u64,
            size as u64,
            size as u64,
            align,
        ] {
            u64s(out, v);
        }
    };
    phdr(&mut out, elf::PT_LOAD.0, 0, total, 0x1000);
    phdr(&mut out, elf::PT_DYNAMIC.0, dyn_off, DYN * dynamic.len(), 8);
    phdr(&mut out, elf::PT_GNU_STACK.0, 0, 0, 16);
    u32s(&mut out, nbucket as u32);
    u32s(&mut out, count as u32);
    buckets
        .iter()
        .chain(&chains)
        .for_each(|&v| u32s(&mut out, v));
    out.resize(sym_off, 0);
    out.extend_from_slice(&[0; SYM]);
    for ((_, addr, data), &name) in symbols.iter().zip(&names) {
        u32s(&mut out, name);
        let kind = if *data {
            elf::STT_OBJECT
        } else {
            elf::STT_FUNC
        };
        out.push(elf::SymbolInfo::new(elf::STB_GLOBAL, kind).0);
        out.push(elf::STV_DEFAULT.0);
        u16s(&mut out, elf::SHN_ABS.0);
        u64s(&mut out, *addr);
        u64s(&mut out, 0);
    }
    out.extend_from_slice(&strtab);
    out.resize(dyn_off, 0);
    for (tag, value) in dynamic {
        u64s(&mut out, tag);
        u64s(&mut out, value);
    }
    debug_assert_eq!(out.len(), total);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The symbols a loader finds: through `PT_DYNAMIC`'s `DT_SYMTAB`,
    /// `DT_STRTAB` and `DT_HASH` (the stub has no section headers).
    fn loader_view(bytes: &[u8]) -> (String, Vec<(String, u64, u8, u16)>) {
        use object::read::elf::{Dyn, FileHeader, ProgramHeader};
        let e = object::LittleEndian;
        let header = object::elf::FileHeader64::<object::LittleEndian>::parse(bytes).unwrap();
        assert_eq!(header.e_type(e), object::elf::ET_DYN);
        let dynamic = header
            .program_headers(e, bytes)
            .unwrap()
            .iter()
            .find_map(|p| p.dynamic(e, bytes).unwrap())
            .expect("PT_DYNAMIC");
        let tag = |t| {
            dynamic
                .iter()
                .find(|d| d.d_tag(e) == t)
                .map(|d| d.d_val(e) as usize)
                .unwrap()
        };
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let cstr = |at: usize| {
            let s = &bytes[tag(object::elf::DT_STRTAB) + at..];
            String::from_utf8(s[..s.iter().position(|&b| b == 0).unwrap()].to_vec()).unwrap()
        };
        let nchain = word(tag(object::elf::DT_HASH) + 4) as usize;
        let syms = (1..nchain)
            .map(|i| {
                let at = tag(object::elf::DT_SYMTAB) + i * SYM;
                let value = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap());
                let shndx = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap());
                (cstr(word(at) as usize), value, bytes[at + 4], shndx)
            })
            .collect();
        (cstr(tag(object::elf::DT_SONAME)), syms)
    }

    #[test]
    fn the_stub_reads_back_as_a_shared_object_of_absolute_symbols() {
        let bytes = write(
            b"libtvm_ffi.so",
            &[
                (b"TVMFFIFunctionCall", 0x1234_5678, false),
                (b"_ZTIN3tvm3ffi5ErrorE", 0x9abc, true),
            ],
        );
        let (soname, syms) = loader_view(&bytes);
        assert_eq!(soname, "libtvm_ffi.so");
        assert_eq!(
            syms,
            [
                (
                    "TVMFFIFunctionCall".to_string(),
                    0x1234_5678,
                    0x12,
                    elf::SHN_ABS.0
                ),
                (
                    "_ZTIN3tvm3ffi5ErrorE".to_string(),
                    0x9abc,
                    0x11,
                    elf::SHN_ABS.0
                )
            ]
        );
    }

    #[test]
    fn the_hash_table_finds_every_symbol() {
        let names: Vec<Vec<u8>> = (0..50).map(|i| format!("sym{i}").into_bytes()).collect();
        let symbols: Vec<(&[u8], u64, bool)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (&n[..], i as u64, false))
            .collect();
        let bytes = write(b"s.so", &symbols);
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let hash_off = EHDR + 3 * PHDR;
        let (nbucket, nchain) = (word(hash_off), word(hash_off + 4));
        assert_eq!(nchain, 51);
        for (i, name) in names.iter().enumerate() {
            let mut at = word(hash_off + 8 + 4 * (sysv_hash(name) as usize % nbucket));
            while at != 0 && at != i + 1 {
                at = word(hash_off + 8 + 4 * (nbucket + at));
            }
            assert_eq!(at, i + 1, "{}", String::from_utf8_lossy(name));
        }
    }
}
