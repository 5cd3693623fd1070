//! Finds libztensor with pkg-config (`ztensor.pc`, or the build tree's
//! `meson-uninstalled/ztensor-uninstalled.pc` when PKG_CONFIG_PATH points
//! there) and tells cargo how to link it. `links = "ztensor"` makes the
//! include directories reachable to dependents as DEP_ZTENSOR_INCLUDE.
fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    match pkg_config::Config::new().atleast_version("1.3").probe("ztensor") {
        Ok(lib) => {
            let dirs: Vec<String> = lib.include_paths.iter().map(|p| p.display().to_string()).collect();
            println!("cargo:include={}", dirs.join(":"));
        }
        Err(e) => {
            eprintln!(
                "ztensor-sys: libztensor >= 1.3 not found through pkg-config ({}).\n\
                 Install it (meson install, or the distribution's libztensor-dev), or build the\n\
                 library and set PKG_CONFIG_PATH=<builddir>/meson-uninstalled.",
                e
            );
            std::process::exit(1);
        }
    }
}
