//! Test helpers without crates (there is no crates index here): SHA-256, a
//! small JSON reader for expected.json, and paths.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

/// tests/data/interop of this repository, or $ZT_INTEROP_DIR (meson sets it).
pub fn interop_dir() -> PathBuf {
    match std::env::var_os("ZT_INTEROP_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/data/interop"),
    }
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("zt-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[path = "sha256.rs"]
mod sha256;
pub use sha256::sha256_hex;

/// A JSON value (numbers kept as text: only strings and integers are read).
#[derive(Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    pub fn parse(text: &str) -> Json {
        let b = text.as_bytes();
        let mut i = 0;
        let v = parse_value(b, &mut i);
        skip_ws(b, &mut i);
        assert_eq!(i, b.len(), "trailing bytes in JSON");
        v
    }
    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(m) => m.get(key).unwrap_or_else(|| panic!("no key {:?}", key)),
            _ => panic!("not an object looking up {:?}", key),
        }
    }
    pub fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("not a string: {:?}", other),
        }
    }
    pub fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            other => panic!("not an array: {:?}", other),
        }
    }
    pub fn obj(&self) -> &BTreeMap<String, Json> {
        match self {
            Json::Obj(m) => m,
            other => panic!("not an object: {:?}", other),
        }
    }
    pub fn u64(&self) -> u64 {
        match self {
            Json::Num(n) => n.parse().unwrap(),
            other => panic!("not a number: {:?}", other),
        }
    }
}

fn skip_ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && b[*i].is_ascii_whitespace() {
        *i += 1;
    }
}

fn parse_value(b: &[u8], i: &mut usize) -> Json {
    skip_ws(b, i);
    match b[*i] {
        b'{' => {
            *i += 1;
            let mut m = BTreeMap::new();
            loop {
                skip_ws(b, i);
                if b[*i] == b'}' {
                    *i += 1;
                    return Json::Obj(m);
                }
                let k = match parse_value(b, i) {
                    Json::Str(s) => s,
                    other => panic!("object key {:?}", other),
                };
                skip_ws(b, i);
                assert_eq!(b[*i], b':');
                *i += 1;
                m.insert(k, parse_value(b, i));
                skip_ws(b, i);
                if b[*i] == b',' {
                    *i += 1;
                }
            }
        }
        b'[' => {
            *i += 1;
            let mut a = Vec::new();
            loop {
                skip_ws(b, i);
                if b[*i] == b']' {
                    *i += 1;
                    return Json::Arr(a);
                }
                a.push(parse_value(b, i));
                skip_ws(b, i);
                if b[*i] == b',' {
                    *i += 1;
                }
            }
        }
        b'"' => {
            *i += 1;
            let mut s = String::new();
            loop {
                match b[*i] {
                    b'"' => {
                        *i += 1;
                        return Json::Str(s);
                    }
                    b'\\' => {
                        *i += 1;
                        match b[*i] {
                            b'n' => s.push('\n'),
                            b't' => s.push('\t'),
                            b'r' => s.push('\r'),
                            b'b' => s.push('\u{8}'),
                            b'f' => s.push('\u{c}'),
                            b'u' => {
                                let hex = std::str::from_utf8(&b[*i + 1..*i + 5]).unwrap();
                                let mut cp = u32::from_str_radix(hex, 16).unwrap();
                                *i += 4;
                                if (0xd800..0xdc00).contains(&cp) && b[*i + 1] == b'\\' && b[*i + 2] == b'u' {
                                    let lo = u32::from_str_radix(std::str::from_utf8(&b[*i + 3..*i + 7]).unwrap(), 16)
                                        .unwrap();
                                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                    *i += 6;
                                }
                                s.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                            }
                            c => s.push(c as char),
                        }
                        *i += 1;
                    }
                    _ => {
                        let start = *i;
                        while b[*i] != b'"' && b[*i] != b'\\' {
                            *i += 1;
                        }
                        s.push_str(std::str::from_utf8(&b[start..*i]).unwrap());
                    }
                }
            }
        }
        b't' => {
            *i += 4;
            Json::Bool(true)
        }
        b'f' => {
            *i += 5;
            Json::Bool(false)
        }
        b'n' => {
            *i += 4;
            Json::Null
        }
        _ => {
            let start = *i;
            while *i < b.len()
                && (b[*i] == b'-'
                    || b[*i] == b'+'
                    || b[*i] == b'.'
                    || b[*i] == b'e'
                    || b[*i] == b'E'
                    || b[*i].is_ascii_digit())
            {
                *i += 1;
            }
            Json::Num(String::from_utf8(b[start..*i].to_vec()).unwrap())
        }
    }
}
