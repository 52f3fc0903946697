#!/usr/bin/env python3
"""Interactive-UI figures measured through a real pseudo-terminal, for pi-rs and the
reference pi (npm, 0.73.1), on the same loopback mock model server.

  scripts/bench/tui_vs_pi.py [--skip-reference] [--turns 10000]

1. time to first frame: start with `--session <big file>` until the footer is drawn
   (a 10k-turn, ~44 MB synthetic session);
2. keystroke to frame: with a 2,000-message session open, type a character and wait for
   the terminal output it causes (median of 40 keys);
3. idle CPU: CPU time used over 5 s with nothing happening;
4. streaming: a 10,000-token answer sent at about 2,000 tokens/s (1,250 events of ~8
   tokens, 4 ms apart); lag = how long after the server sent the last token the end of
   the answer is on screen (the server's own send time is measured with a plain client).

Needs: `cargo build --release --bin pi --example mock_llm --example gen_session`.
"""
import argparse
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REL = ROOT / "target/release"


class Pty:
    def __init__(self, argv, env, cwd, cols=120, rows=40):
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.buf = b""

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return b""
        try:
            data = os.read(self.fd, 1 << 16)
        except OSError:
            return b""
        # Answer the terminal queries programs send at start-up, like a real terminal
        # (a primary device-attributes report; no kitty keyboard protocol). Without an
        # answer some programs wait for a timeout before drawing.
        if b"\x1b[c" in data or b"\x1b[0c" in data:
            os.write(self.fd, b"\x1b[?62;22c")
        self.buf += data
        return data

    def wait_for(self, needle: bytes, timeout=120):
        # Scan only what arrived since the last look (plus an overlap): re-scanning the
        # whole growing buffer is quadratic and would stop us draining the terminal, which
        # then blocks the program's writes and distorts every timing.
        start = time.perf_counter()
        scanned = 0
        while needle not in self.buf[max(0, scanned - len(needle)):]:
            scanned = len(self.buf)
            if time.perf_counter() - start > timeout:
                raise TimeoutError(f"did not see {needle!r}")
            self.read(0.05)
        return time.perf_counter() - start

    def drain(self, quiet=0.3):
        while self.read(quiet):
            pass

    def write(self, data: bytes):
        os.write(self.fd, data)

    def cpu_ms(self):
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) * 1000 / ticks

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def setup(tmp: Path, port: int):
    home = tmp / "home"
    agent = home / ".pi/agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}}}))
    (agent / "settings.json").write_text(json.dumps({"quietStartup": True, "defaultProvider": "mock",
                                                      "defaultModel": "mock-model"}))
    proj = tmp / "proj"
    proj.mkdir()
    env = dict(os.environ, HOME=str(home), TERM="xterm-256color", PI_OFFLINE="1")
    env.pop("PI_CODING_AGENT_DIR", None)
    return env, proj


def measure(name, argv, env, proj, big, medium):
    out = {}
    # 1. first frame with the big session
    start = time.perf_counter()
    p = Pty(argv + ["--session", str(big)], env, proj)
    try:
        p.wait_for(b"mock-model", timeout=300)
        out["first_frame_ms"] = (time.perf_counter() - start) * 1000
    finally:
        p.kill()
    # 2 + 3. keystrokes and idle CPU with the medium session
    p = Pty(argv + ["--session", str(medium)], env, proj)
    try:
        p.wait_for(b"mock-model", timeout=300)
        p.drain(1.0)
        samples = []
        for i in range(40):
            p.drain(0.05)
            t0 = time.perf_counter()
            p.write(b"x")
            if not p.read(2.0):
                raise TimeoutError("no output after a key")
            samples.append((time.perf_counter() - t0) * 1000)
        out["keystroke_ms"] = statistics.median(samples)
        p.write(b"\x15")  # clear the line (ctrl+u)
        p.drain(1.0)
        c0 = p.cpu_ms()
        time.sleep(5)
        out["idle_cpu_ms_per_5s"] = p.cpu_ms() - c0
    finally:
        p.kill()
    # 4. streaming
    p = Pty(argv, env, proj)
    try:
        p.wait_for(b"mock-model", timeout=60)
        p.drain(0.5)
        t0 = time.perf_counter()
        p.write(b"stream please\r")
        p.wait_for(b"END-OF-STREAM", timeout=120)
        out["stream_total_s"] = time.perf_counter() - t0
    finally:
        p.kill()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument("--turns", type=int, default=10000)
    args = ap.parse_args()
    for p in ("pi", "examples/mock_llm", "examples/gen_session"):
        if not (REL / p).exists():
            sys.exit(f"missing target/release/{p}: cargo build --release --bin pi --example mock_llm --example gen_session")
    tmp = Path(tempfile.mkdtemp(prefix="pi-tui-bench-"))
    try:
        big, medium = tmp / "big.jsonl", tmp / "medium.jsonl"
        subprocess.run([REL / "examples/gen_session", big, str(args.turns)], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([REL / "examples/gen_session", medium, "500"], check=True, stdout=subprocess.DEVNULL)
        # 10,000 tokens of ~4 characters in 1,250 events of 32 characters, 4 ms apart.
        text = "".join(f"tok{i % 10} " for i in range(10000)) + "END-OF-STREAM"
        script = {"sequence": [], "default": {"text": text, "chunk_size": 32, "delay_ms": 4}}
        (tmp / "script.json").write_text(json.dumps(script))
        port = 19300 + os.getpid() % 500
        server = subprocess.Popen([REL / "examples/mock_llm", "--port", str(port), "--script", str(tmp / "script.json")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        env, proj = setup(tmp, port)
        # The sessions must belong to the project directory: pi 0.73 stops to ask what
        # to do when a session's recorded working directory does not exist.
        for f in (big, medium):
            with open(f, "r+b") as fh:
                lines = fh.read().split(b"\n", 1)
                header = json.loads(lines[0])
                header["cwd"] = str(proj)
                fh.seek(0)
                fh.write(json.dumps(header, separators=(",", ":")).encode() + b"\n" + lines[1])
                fh.truncate()
        import urllib.request
        t0 = time.perf_counter()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(
            {"model": "mock-model", "messages": [{"role": "user", "content": "x"}], "stream": True}).encode(),
            headers={"content-type": "application/json"})
        with urllib.request.urlopen(req) as r:
            while r.read(65536):
                pass
        server_send_s = time.perf_counter() - t0
        ours = [str(REL / "pi"), "--provider", "mock", "--model", "mock-model"]
        results = {"pi-rs": measure("pi-rs", ours, env, proj, big, medium)}
        if not args.skip_reference:
            ref = [str(ROOT / "tests/support/reference-pi.sh"), "--offline", "--provider", "mock", "--model", "mock-model"]
            results["pi 0.73.1"] = measure("pi", ref, env, proj, big, medium)
        server.kill()
        names = list(results)
        print(f"{'metric':28}" + "".join(f"{n:>14}" for n in names))
        for key, label in [("first_frame_ms", "first frame, 44 MB (ms)"), ("keystroke_ms", "keystroke to frame (ms)"),
                           ("idle_cpu_ms_per_5s", "idle CPU per 5 s (ms)"), ("stream_total_s", "10k-token stream (s)")]:
            print(f"{label:28}" + "".join(f"{results[n][key]:14.1f}" for n in names))
        print(f"{'stream lag (s)':28}" + "".join(f"{results[n]['stream_total_s'] - server_send_s:14.2f}" for n in names))
        print(f"(the server alone needs {server_send_s:.1f} s to send the stream)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
