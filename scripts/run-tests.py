#!/usr/bin/env python3
"""Runs the workspace's compiled test binaries several at a time (scripts/test-all.sh).

`cargo test` runs one test binary after another; most of ours spend their time waiting on child
processes (pi in a pty, Node, MCP servers, the local model), so on a 2-core machine several
binaries side by side finish in far less wall time. Each binary runs as `cargo test` would run it:
in its package's folder, with CARGO_MANIFEST_DIR and the other CARGO_PKG_* variables set, and its
output is printed whole when it ends (never interleaved), in cargo's format. Every binary runs
(no fail-fast); the exit status is 101 when one failed, as cargo's.

    cargo test --workspace --no-run --message-format=json-render-diagnostics > build.json
    scripts/run-tests.py build.json [-- test-binary args...]

PI_TEST_JOBS sets how many binaries run at once (default 3). The longest binaries of the last
run (their times are kept in $CARGO_TARGET_DIR/pi-test-times.json; on a first run, those of
scripts/test-times.json, a CI run's) start first.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def artifacts(build_json):
    """The test executables cargo built, in cargo's order, with their package's data."""
    out = []
    seen = set()
    for line in Path(build_json).read_text().splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("profile", {}).get("test"):
            continue
        exe = msg.get("executable")
        if not exe or exe in seen:
            continue
        seen.add(exe)
        target = msg["target"]
        out.append(
            {
                "exe": exe,
                "src": target["src_path"],
                "name": target["name"],
                "kind": target["kind"][0],
                "manifest": msg["manifest_path"],
                "package_id": msg["package_id"],
            }
        )
    return out


def package_env(art):
    """The variables `cargo test` sets for a test binary at run time."""
    manifest_dir = str(Path(art["manifest"]).parent)
    # package_id: "path+file:///…/pi-ai#0.1.0" or "path+file:///…/examples#pi-examples@0.1.0"
    tail = art["package_id"].rsplit("#", 1)[-1]
    name, _, version = tail.partition("@")
    if not version:
        name, version = Path(manifest_dir).name, tail
    env = dict(os.environ)
    env.update(
        {
            "CARGO_MANIFEST_DIR": manifest_dir,
            "CARGO_MANIFEST_PATH": art["manifest"],
            "CARGO_PKG_NAME": name,
            "CARGO_PKG_VERSION": version,
            "CARGO_CRATE_NAME": art["name"].replace("-", "_"),
        }
    )
    return manifest_dir, env


def display_path(art, root):
    try:
        return str(Path(art["src"]).relative_to(Path(art["manifest"]).parent))
    except ValueError:
        return os.path.relpath(art["src"], root)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    build_json, test_args = args[0], args[1:]
    if test_args[:1] == ["--"]:
        test_args = test_args[1:]
    arts = artifacts(build_json)
    if not arts:
        print(f"[run-tests] error: no test binaries found in {build_json}", file=sys.stderr)
        return 1
    root = os.getcwd()
    times_file = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "pi-test-times.json"
    # A first run (a fresh CARGO_TARGET_DIR) orders by the committed times of a CI run instead.
    last = {}
    for source in (times_file, Path(__file__).with_name("test-times.json")):
        try:
            last = json.loads(source.read_text())
            break
        except (OSError, ValueError):
            continue
    key = lambda a: f'{a["package_id"].rsplit("/", 1)[-1]}::{a["kind"]}::{a["name"]}'
    arts.sort(key=lambda a: -float(last.get(key(a), 0)))
    jobs = max(1, int(os.environ.get("PI_TEST_JOBS", "3")))

    lock = threading.Lock()
    queue = list(arts)
    results = []
    started = time.monotonic()

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                art = queue.pop(0)
            cwd, env = package_env(art)
            t0 = time.monotonic()
            proc = subprocess.run(
                [art["exe"], *test_args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            took = time.monotonic() - t0
            text = proc.stdout.decode("utf-8", "replace")
            with lock:
                kind = "unittests " if art["kind"] in ("lib", "bin") else ""
                print(f"     Running {kind}{display_path(art, root)} ({art['exe']}) [{took:.1f}s]", flush=True)
                sys.stdout.write(text)
                sys.stdout.flush()
                results.append((art, proc.returncode, took))

    threads = [threading.Thread(target=worker) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    failed = [a for a, code, _ in results if code != 0]
    try:
        times_file.write_text(json.dumps({key(a): round(t, 2) for a, _, t in results}, indent=0))
    except OSError:
        pass
    wall = time.monotonic() - started
    print(f"\n[run-tests] {len(results)} test binaries, {jobs} at a time, {wall:.1f}s", flush=True)
    if failed:
        print("error: test failed in:", file=sys.stderr)
        for a in failed:
            print(f"    {display_path(a, root)} ({a['exe']})", file=sys.stderr)
        return 101
    return 0


if __name__ == "__main__":
    sys.exit(main())
