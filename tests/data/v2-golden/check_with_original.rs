//! Opens each file with the original's reader, verifies every digest and
//! decodes every part, and prints its canonical-form verdict.
//! Usage: check <file>...   (exit 1 if any file fails to open or verify)
fn main() {
    let mut bad = false;
    for path in std::env::args().skip(1) {
        let r = (|| -> ztensor::Result<String> {
            let src = ztensor::Source::open(&path)?;
            let mut n = 0;
            for t in src.tensors() {
                t.verify()?;
                for p in t.parts() {
                    let part = t.part(p)?;
                    let _ = part.bytes()?;
                    n += 1;
                }
            }
            let v = ztensor::read::canonical_violations(&path)?;
            Ok(format!("ok, {n} parts, canonical: {}", if v.is_empty() { "yes".to_string() } else { v.join(" | ") }))
        })();
        match r {
            Ok(s) => println!("{path}: {s}"),
            Err(e) => {
                bad = true;
                println!("{path}: FAIL {e}")
            }
        }
    }
    std::process::exit(bad as i32);
}
