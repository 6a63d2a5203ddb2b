//! Redirecting the calls one loaded shared library makes to an imported function: the
//! library's import slot for that function (the GOT entry its PLT stub jumps through) is
//! rewritten, in this process, to point at a function of ours. Nothing else changes: other
//! libraries keep calling the original, and the library's own code is untouched.
//!
//! The IPOPT backend uses it to remove two costs of Debian's Ipopt 3.11 and MUMPS 5.5 that
//! no option of theirs turns off (`ipopt/overheads.rs` says which and what they cost).
//!
//! Linux with glibc, 64-bit ELF, x86_64 or aarch64: elsewhere [`redirect`] rewrites nothing
//! and says so. It reads the loaded objects with `dl_iterate_phdr`, their dynamic sections'
//! symbol tables and relocations (`DT_JMPREL`, `DT_RELA`), and writes one pointer per
//! matching slot; a slot in a read-only-after-relocation segment (`PT_GNU_RELRO`) is made
//! writable for the write and read-only again.
//!
//! Depends on nothing in glassbox.

use std::ffi::{c_char, c_int, c_void, CStr};

/// How many slots [`redirect`] rewrote, per library whose file name matched.
#[derive(Debug, Default)]
pub struct Redirected {
    /// The libraries (their file names) whose name matched, with the slots rewritten in each.
    pub libraries: Vec<(String, usize)>,
}

impl Redirected {
    /// The slots rewritten over every matching library.
    pub fn slots(&self) -> usize {
        self.libraries.iter().map(|(_, n)| n).sum()
    }
}

/// Rewrites, in every loaded library whose file name contains `library`, each import slot
/// of the function `symbol` so that its calls go to `replacement`. A library that matches
/// but does not import `symbol` is listed with 0 slots; a library that is not loaded is not
/// listed.
///
/// # Safety
/// `replacement` is a function with exactly the ABI and signature of `symbol` as the library
/// calls it, valid for the rest of the process; no other thread rewrites the same slots.
pub unsafe fn redirect(
    library: &str,
    symbol: &str,
    replacement: *const c_void,
) -> Result<Redirected, String> {
    imp::redirect(library, symbol, replacement)
}

#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    target_pointer_width = "64",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    use super::*;

    const DT_NULL: i64 = 0;
    const DT_PLTRELSZ: i64 = 2;
    const DT_STRTAB: i64 = 5;
    const DT_SYMTAB: i64 = 6;
    const DT_RELA: i64 = 7;
    const DT_RELASZ: i64 = 8;
    const DT_STRSZ: i64 = 10;
    const DT_PLTREL: i64 = 20;
    const DT_JMPREL: i64 = 23;

    /// The relocation types that fill a function's import slot: a PLT slot
    /// (`JUMP_SLOT`) and a GOT entry loaded directly (`GLOB_DAT`, code built with `-fno-plt`).
    #[cfg(target_arch = "x86_64")]
    const SLOT_TYPES: [u32; 2] = [7, 6];
    #[cfg(target_arch = "aarch64")]
    const SLOT_TYPES: [u32; 2] = [1026, 1025];

    #[repr(C)]
    struct Dyn {
        tag: i64,
        value: u64,
    }

    #[repr(C)]
    struct Rela {
        offset: u64,
        info: u64,
        _addend: i64,
    }

    #[repr(C)]
    struct Sym {
        name: u32,
        _info: u8,
        _other: u8,
        _section: u16,
        _value: u64,
        _size: u64,
    }

    /// One loaded library: its load address, file name, dynamic section and RELRO range.
    struct Loaded {
        base: usize,
        name: String,
        dynamic: *const Dyn,
        relro: Option<(usize, usize)>,
    }

    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: glibc passes a valid dl_phdr_info; `data` is the Vec `loaded` passes.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<Loaded>)) };
        if info.dlpi_name.is_null() || info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: a NUL-terminated name that lives as long as the object is loaded.
        let name = unsafe { CStr::from_ptr(info.dlpi_name as *const c_char) };
        let base = info.dlpi_addr as usize;
        let mut dynamic = std::ptr::null();
        let mut relro = None;
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phnum program headers follow dlpi_phdr.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            match ph.p_type {
                libc::PT_DYNAMIC => dynamic = (base + ph.p_vaddr as usize) as *const Dyn,
                libc::PT_GNU_RELRO => {
                    let start = base + ph.p_vaddr as usize;
                    relro = Some((start, start + ph.p_memsz as usize));
                }
                _ => {}
            }
        }
        if !dynamic.is_null() {
            out.push(Loaded {
                base,
                name: name.to_string_lossy().into_owned(),
                dynamic,
                relro,
            });
        }
        0
    }

    fn loaded() -> Vec<Loaded> {
        let mut out: Vec<Loaded> = Vec::new();
        // SAFETY: `collect` only reads what glibc passes and pushes into `out`.
        unsafe { libc::dl_iterate_phdr(Some(collect), &mut out as *mut _ as *mut c_void) };
        out
    }

    /// A dynamic-section address: glibc relocates them in place on these targets, but an
    /// unrelocated one (smaller than the load address) is an offset from it.
    fn address(base: usize, value: u64) -> usize {
        let value = value as usize;
        if value < base {
            base + value
        } else {
            value
        }
    }

    pub(super) fn redirect(
        library: &str,
        symbol: &str,
        replacement: *const c_void,
    ) -> Result<Redirected, String> {
        let mut done = Redirected::default();
        for lib in loaded()
            .iter()
            .filter(|l| file_name(&l.name).contains(library))
        {
            // SAFETY: the object is loaded (dl_iterate_phdr listed it and glassbox never
            // unloads a solver library), so its dynamic section and tables are mapped.
            let n = unsafe { redirect_in(lib, symbol, replacement)? };
            done.libraries.push((file_name(&lib.name).to_string(), n));
        }
        Ok(done)
    }

    fn file_name(path: &str) -> &str {
        path.rsplit('/').next().unwrap_or(path)
    }

    /// # Safety
    /// `lib` is loaded; see [`super::redirect`].
    unsafe fn redirect_in(
        lib: &Loaded,
        symbol: &str,
        replacement: *const c_void,
    ) -> Result<usize, String> {
        let (mut strtab, mut strsz, mut symtab) = (0usize, 0usize, 0usize);
        let (mut jmprel, mut pltrelsz, mut pltrel) = (0usize, 0usize, DT_RELA);
        let (mut rela, mut relasz) = (0usize, 0usize);
        let mut entry = lib.dynamic;
        loop {
            // SAFETY: the dynamic section is an array ended by DT_NULL.
            let d = unsafe { &*entry };
            match d.tag {
                DT_NULL => break,
                DT_STRTAB => strtab = address(lib.base, d.value),
                DT_STRSZ => strsz = d.value as usize,
                DT_SYMTAB => symtab = address(lib.base, d.value),
                DT_JMPREL => jmprel = address(lib.base, d.value),
                DT_PLTRELSZ => pltrelsz = d.value as usize,
                DT_PLTREL => pltrel = d.value as i64,
                DT_RELA => rela = address(lib.base, d.value),
                DT_RELASZ => relasz = d.value as usize,
                _ => {}
            }
            // SAFETY: still within the array (DT_NULL not yet seen).
            entry = unsafe { entry.add(1) };
        }
        if strtab == 0 || symtab == 0 {
            return Err(format!("{}: no dynamic symbol table", lib.name));
        }
        if pltrel != DT_RELA {
            return Err(format!("{}: PLT relocations are not RELA", lib.name));
        }
        let mut rewritten = 0;
        for (table, size) in [(jmprel, pltrelsz), (rela, relasz)] {
            if table == 0 {
                continue;
            }
            let count = size / std::mem::size_of::<Rela>();
            // SAFETY: the relocation table of `size` bytes is mapped at `table`.
            let relocations = unsafe { std::slice::from_raw_parts(table as *const Rela, count) };
            for r in relocations {
                if !SLOT_TYPES.contains(&((r.info & 0xffff_ffff) as u32)) {
                    continue;
                }
                let index = (r.info >> 32) as usize;
                // SAFETY: the relocation names a symbol of the table.
                let sym = unsafe { &*(symtab as *const Sym).add(index) };
                if strsz != 0 && sym.name as usize >= strsz {
                    continue;
                }
                // SAFETY: st_name is an offset into the string table, NUL-terminated there.
                let name = unsafe { CStr::from_ptr((strtab + sym.name as usize) as *const c_char) };
                if name.to_bytes() != symbol.as_bytes() {
                    continue;
                }
                let slot = lib.base + r.offset as usize;
                // SAFETY: `slot` is the library's pointer-sized, aligned import slot.
                unsafe { write_slot(slot, replacement as usize, lib.relro)? };
                rewritten += 1;
            }
        }
        Ok(rewritten)
    }

    /// Writes `value` into the pointer at `slot`, making its page writable for the write
    /// where it lies in the RELRO range (and read-only again after).
    unsafe fn write_slot(
        slot: usize,
        value: usize,
        relro: Option<(usize, usize)>,
    ) -> Result<(), String> {
        let protected = relro.is_some_and(|(start, end)| (start..end).contains(&slot));
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let start = slot & !(page - 1);
        let protect = |flags: c_int| {
            // SAFETY: the page holds the slot and is mapped.
            if unsafe { libc::mprotect(start as *mut c_void, page, flags) } != 0 {
                Err(format!("mprotect: {}", std::io::Error::last_os_error()))
            } else {
                Ok(())
            }
        };
        if protected {
            protect(libc::PROT_READ | libc::PROT_WRITE)?;
        }
        // SAFETY: an aligned, writable pointer slot; the store is one machine word, so a
        // concurrent caller jumps through the old or the new address, both valid.
        unsafe { std::ptr::write_volatile(slot as *mut usize, value) };
        if protected {
            protect(libc::PROT_READ)?;
        }
        Ok(())
    }
}

#[cfg(not(all(
    target_os = "linux",
    target_env = "gnu",
    target_pointer_width = "64",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use super::*;

    pub(super) fn redirect(_: &str, _: &str, _: *const c_void) -> Result<Redirected, String> {
        Err("import slots are rewritten on 64-bit Linux with glibc only".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn never_called() {}

    #[test]
    fn a_library_that_is_not_loaded_is_not_listed() {
        // SAFETY: nothing matches, so nothing is written.
        let done = unsafe {
            redirect(
                "libglassbox_no_such_library",
                "getrusage",
                never_called as *const c_void,
            )
        }
        .unwrap();
        assert!(done.libraries.is_empty(), "{done:?}");
        assert_eq!(done.slots(), 0);
    }

    /// libipopt is loaded in this test binary from its start (linked; the torch build opens
    /// it at the first solve instead) and imports no function of this name, so it is listed
    /// with 0 slots and nothing is written.
    #[cfg(not(feature = "torch"))]
    #[test]
    fn a_library_without_the_import_is_listed_with_no_slot() {
        // SAFETY: libipopt imports no `glassbox_no_such_function`, so nothing is written.
        let done = unsafe {
            redirect(
                "libipopt",
                "glassbox_no_such_function",
                never_called as *const c_void,
            )
        }
        .unwrap();
        assert_eq!(done.libraries.len(), 1, "{done:?}");
        assert!(done.libraries[0].0.starts_with("libipopt"), "{done:?}");
        assert_eq!(done.slots(), 0);
    }
}
