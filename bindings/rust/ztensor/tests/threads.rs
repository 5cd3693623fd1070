//! File and Object are Send + Sync: several threads read one file at once.
mod common;

use ztensor::{BlobOptions, File, Object, OpenOptions, Writer, WriterOptions};

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>() {}

#[test]
fn threads_share_one_file() {
    assert_send_sync::<File>();
    assert_send_sync::<Object<'static>>();
    assert_send_sync::<ztensor::Set>();
    assert_send::<Writer>();
    assert_send::<ztensor::ComponentStream>();

    let mut w = Writer::memory(&WriterOptions::new()).unwrap();
    for t in 0..8 {
        let data: Vec<i64> = (0..4096).map(|i| i * (t + 1)).collect();
        let opts = if t % 2 == 0 { None } else { Some(BlobOptions::zstd(1)) };
        w.add_dense(&format!("t{}", t), &[4096], &data, opts.as_ref()).unwrap();
    }
    let file = File::from_memory(w.finish_memory().unwrap(), &OpenOptions::new()).unwrap();
    std::thread::scope(|s| {
        for k in 0..4 {
            let file = &file;
            s.spawn(move || {
                for round in 0..50 {
                    let t = (k + round) % 8;
                    let o = file.object_by_name(&format!("t{}", t)).unwrap();
                    let v: Vec<i64> = o.read(0).unwrap();
                    assert_eq!(v[4095], 4095 * (t as i64 + 1));
                }
            });
        }
    });
    // A stream outlives its File (it holds the open file).
    let stream = file.object_by_name("t1").unwrap().stream(0).unwrap();
    drop(file);
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut { stream }, &mut bytes).unwrap();
    assert_eq!(bytes.len(), 4096 * 8);
}
