//! libFuzzer target: see entry_points.rs for what it exercises.
#![no_main]

#[path = "../entry_points.rs"]
mod entry_points;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry_points::config_parser(data);
});
