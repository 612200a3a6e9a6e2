//! Release links of the `pi` binary on Linux (GNU): the functions a one-shot `pi -p` run executes
//! are placed together ahead of the rest of `.text` (`startup-order.ld`, written by
//! `scripts/startup-order.sh`), and relative relocations are packed (`DT_RELR`). A run then faults
//! in about 2 MB of code instead of most of a 25 MB `.text`, and the loader reads a few kilobytes
//! of relocations instead of 1.35 MB. Debug builds, tests and other targets link as before.
//!
//! The list names exact symbols: after a change to the code some are no longer there and new ones
//! are missing from it. A linker script's unknown names match nothing, so a stale list costs only
//! memory, never the build. `PI_NO_STARTUP_ORDER=1` links without it (say, for another linker).

use std::path::Path;

fn main() {
    const ORDER: &str = "startup-order.ld";
    println!("cargo::rerun-if-changed={ORDER}");
    println!("cargo::rerun-if-env-changed=PI_NO_STARTUP_ORDER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let release = var("PROFILE") == "release";
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if !release || !linux_gnu || !var("PI_NO_STARTUP_ORDER").is_empty() {
        return;
    }
    // glibc 2.36 and binutils 2.38 / lld 15 know DT_RELR.
    println!("cargo::rustc-link-arg-bin=pi=-Wl,-z,pack-relative-relocs");
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(ORDER);
    if order.is_file() {
        println!("cargo::rustc-link-arg-bin=pi=-Wl,-T,{}", order.display());
    }
}
