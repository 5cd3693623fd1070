//! `cargo bench`: what the safe API costs per call over the raw C calls,
//! measured in the same run (stable Rust: a plain timing harness).
//!
//! For a small tensor (16 f32) in a memory file it times, per iteration,
//! (a) the C calls alone through ztensor-sys: zt_file_object_by_name +
//! zt_component_read into a caller buffer, and (b) the same work through
//! the safe API: `object_by_name` + `read_into` (which also checks the
//! component's dtype, one more C call). It prints ns per iteration and the
//! ratio b/a. ZT_BENCH_ITERS sets the iteration count (default 200000).
use std::os::raw::{c_char, c_void};
use std::time::Instant;

use ztensor::{sys, File, OpenOptions, Writer, WriterOptions};

fn main() {
    let iters: usize = std::env::var("ZT_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let mut w = Writer::memory(&WriterOptions::new()).unwrap();
    let data: Vec<f32> = (0..16).map(|i| i as f32).collect();
    for i in 0..64 {
        w.add_dense(&format!("t{}", i), &[16], &data, None).unwrap();
    }
    let file = File::from_memory(w.finish_memory().unwrap(), &OpenOptions::new()).unwrap();
    let mut dst = [0f32; 16];
    let name = "t42";

    let mut best_c = f64::MAX;
    let mut best_rs = f64::MAX;
    for _round in 0..5 {
        let t = Instant::now();
        for _ in 0..iters {
            let mut o = std::ptr::null();
            let mut n = 0usize;
            unsafe {
                assert_eq!(
                    sys::zt_file_object_by_name(file.as_raw(), name.as_ptr() as *const c_char, name.len(), &mut o),
                    0
                );
                assert_eq!(
                    sys::zt_component_read(o, 0, dst.as_mut_ptr() as *mut c_void, 64, &mut n),
                    0
                );
            }
        }
        best_c = best_c.min(t.elapsed().as_nanos() as f64 / iters as f64);
        let t = Instant::now();
        for _ in 0..iters {
            let o = file.object_by_name(name).unwrap();
            o.read_into(0, &mut dst).unwrap();
        }
        best_rs = best_rs.min(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    assert_eq!(dst[3], 3.0);
    println!("C calls (object_by_name + component_read, 64 B): {:.0} ns/iter", best_c);
    println!(
        "safe API (object_by_name + read_into):           {:.0} ns/iter",
        best_rs
    );
    println!(
        "ratio safe/C: {:.2}x (best of 5 rounds of {} iterations)",
        best_rs / best_c,
        iters
    );
}
