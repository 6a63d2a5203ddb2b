//! Shared libraries opened at run time (`dlopen`), in the `torch` build: libipopt with
//! `RTLD_DEEPBIND` (`ipopt::ffi::dynamic`) and libtorch's CUDA library (`torch`). Handles
//! are never closed: what they hold is used until the process ends. What only libipopt's
//! loading uses is behind the `ipopt` feature.
//!
//! Depends on nothing in glassbox.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

pub const RTLD_NOW: c_int = 2;
pub const RTLD_LOCAL: c_int = 0;
#[cfg(feature = "ipopt")]
pub const RTLD_DEEPBIND: c_int = 8;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    #[cfg(feature = "ipopt")]
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

fn last_error() -> String {
    // SAFETY: dlerror returns null or a C string valid until the next dl* call.
    unsafe {
        let message = dlerror();
        if message.is_null() {
            "unknown error".to_string()
        } else {
            CStr::from_ptr(message).to_string_lossy().into_owned()
        }
    }
}

/// Opens `file` (a path, or a name the dynamic loader searches for) with `mode`; the error
/// is the loader's.
pub fn open(file: &str, mode: c_int) -> Result<*mut c_void, String> {
    let name = CString::new(file).map_err(|e| e.to_string())?;
    // SAFETY: a NUL-terminated file name; the handle is never closed.
    let library = unsafe { dlopen(name.as_ptr(), mode) };
    if library.is_null() {
        Err(last_error())
    } else {
        Ok(library)
    }
}

/// The address of `name` (which ends with a NUL) in `library`, a live handle.
#[cfg(feature = "ipopt")]
pub fn symbol(library: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    // SAFETY: a live handle and a NUL-terminated name.
    let address = unsafe { dlsym(library, name.as_ptr().cast()) };
    if address.is_null() {
        Err(format!("{}: {}", name.trim_end_matches('\0'), last_error()))
    } else {
        Ok(address)
    }
}
