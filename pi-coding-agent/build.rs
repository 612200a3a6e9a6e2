//! Link options of the `pi` binary's release build (a one-shot `pi -p` faults in the binary's pages
//! it runs, so where its code lies decides much of its memory):
//!
//! - `startup-order.ld` (made by `scripts/startup-order.sh` from the functions a `pi -p` run
//!   executes) places those functions together ahead of the rest of `.text`: the kernel maps
//!   64 KiB around each page fault, and startup code spread over the whole `.text` made a one-shot
//!   run map most of it. GNU ld and lld read it (`INSERT BEFORE .text` keeps the default script).
//! - Relative relocations are packed (`DT_RELR`, glibc 2.36+, binutils 2.38+): the dynamic loader
//!   reads a few KiB instead of a 1.3 MiB `.rela.dyn` at every start.
//!
//! `PI_LINK_DEFAULT=1` links with the toolchain's defaults (another linker, an older glibc).

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=startup-order.ld");
    println!("cargo:rerun-if-env-changed=PI_LINK_DEFAULT");
    println!("cargo:rerun-if-env-changed=PI_LINK_EXPERIMENT");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    let default = std::env::var("PI_LINK_DEFAULT").is_ok_and(|v| !v.is_empty() && v != "0");
    if !release || !linux_gnu || default {
        return;
    }
    let experiment = std::env::var("PI_LINK_EXPERIMENT").unwrap_or_default();
    let has = |name: &str| experiment.split(',').any(|e| e == name);
    let order = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("startup-order.ld");
    if order.is_file() && !has("no-order") {
        println!("cargo:rustc-link-arg-bin=pi=-Wl,-T,{}", order.display());
    }
    if !has("no-relr") {
        println!("cargo:rustc-link-arg-bin=pi=-Wl,-z,pack-relative-relocs");
    }
    if has("no-pie") {
        println!("cargo:rustc-link-arg-bin=pi=-no-pie");
    }
}
