//! The README's program: open a .zt file, read a tensor, verify the file.
//! usage: cargo run --example verify -- FILE.zt
use ztensor::{Dtype, File};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: verify FILE.zt")?;
    let file = File::open(&path)?;
    println!("{}: spec {}, {} objects", path, file.version()?, file.len()?);
    for object in file.objects()? {
        let info = object.info()?;
        let data = object.component(0)?;
        println!("  {} {} {:?} {}", info.name, info.format, info.shape, data.dtype_name);
        if data.dtype == Some(Dtype::F32) {
            let values: Vec<f32> = object.read(0)?; // decoded, any encoding
            println!("    first values {:?}", &values[..values.len().min(4)]);
        }
    }
    file.verify(false)?; // every digest and zstd frame
    println!("verified");
    Ok(())
}
