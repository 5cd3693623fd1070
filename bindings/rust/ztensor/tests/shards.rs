//! v2 shards found by the caller (File::open_sharded) or by identity
//! (IdentityScan): docs/v2.md "Shards".
use std::ffi::CString;
use std::path::Path;

use ztensor::{sys, File, IdentityScan, OpenOptions, Status, Writer, WriterOptions};

fn make_sharded(dir: &Path) -> String {
    let mut paths = Vec::new();
    for (name, v) in [("a", 1f32), ("b", 2f32)] {
        let p = dir.join(format!("root-{name}.zt"));
        let mut w = Writer::create_with(&p, &WriterOptions::new().v2()).unwrap();
        w.add_dense(&format!("t.{name}"), &[4], &[v; 4], None).unwrap();
        w.finish().unwrap();
        paths.push(CString::new(p.to_str().unwrap()).unwrap());
    }
    let names = [CString::new("a").unwrap(), CString::new("b").unwrap()];
    let root = dir.join("root.zt");
    let croot = CString::new(root.to_str().unwrap()).unwrap();
    let pp: Vec<_> = paths.iter().map(|c| c.as_ptr()).collect();
    let np: Vec<_> = names.iter().map(|c| c.as_ptr()).collect();
    let st = unsafe { sys::zt_v2_make_sharded(croot.as_ptr(), pp.as_ptr(), np.as_ptr(), 2, sys::ZT_DIGEST_XXH3, 0) };
    assert_eq!(st, sys::ZT_OK);
    root.to_str().unwrap().to_string()
}

fn tmp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("zt_rust_shards_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("store")).unwrap();
    d
}

#[test]
fn a_closure_resolves_renamed_shards() {
    let dir = tmp("closure");
    let root = make_sharded(&dir);
    std::fs::rename(dir.join("root-a.zt"), dir.join("store/first")).unwrap();
    let first = dir.join("store/first").to_str().unwrap().to_string();
    let mut asked = Vec::new();
    let f = File::open_sharded(&root, None, &OpenOptions::default(), |name, _size, digest| {
        asked.push((name.to_string(), digest[..5].to_string()));
        if name == "a" {
            Some(first.clone())
        } else {
            None
        }
    })
    .unwrap();
    asked.sort();
    assert_eq!(asked, vec![("a".into(), "xxh3:".into()), ("b".into(), "xxh3:".into())]);
    assert_eq!(f.object_by_name("t.a").unwrap().read::<f32>(0).unwrap(), vec![1f32; 4]);
    let err = f.object_by_name("t.b").unwrap().read::<f32>(0).unwrap_err();
    assert_eq!(err.status(), Status::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn identity_scan_survives_renaming() {
    let dir = tmp("identity");
    let root = make_sharded(&dir);
    std::fs::rename(dir.join("root-a.zt"), dir.join("store/y.zt")).unwrap();
    std::fs::rename(dir.join("root-b.zt"), dir.join("store/x.zt")).unwrap();
    let scan = IdentityScan::new(dir.join("store")).unwrap();
    let f = File::open_sharded_by_identity(&root, None, &OpenOptions::default(), &scan).unwrap();
    drop(scan); // opened files do not need it
    assert_eq!(f.object_by_name("t.b").unwrap().read::<f32>(0).unwrap(), vec![2f32; 4]);
    assert_eq!(f.object_by_name("t.a").unwrap().read::<f32>(0).unwrap(), vec![1f32; 4]);
    std::fs::remove_dir_all(&dir).unwrap();
}
