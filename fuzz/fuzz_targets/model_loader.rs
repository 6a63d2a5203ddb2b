//! libFuzzer target: see entry_points.rs for what it exercises.
#![no_main]

// Each target uses one of the shared entry points.
#[allow(dead_code)]
#[path = "../entry_points.rs"]
mod entry_points;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    entry_points::model_loader(data);
});
