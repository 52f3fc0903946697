#!/usr/bin/env python3
"""RPC mode of pi-rs against the reference pi (npm, 1.6.0), whole programs.

  scripts/bench/rpc_vs_pi.py [--runs N] [--pi-rs target/release/pi] [--reference CMD]

Measures, for both programs, on the same loopback mock model server:
  1. start → first answer: `pi --mode rpc --no-session`, time until `get_state` is answered
  2. the same with `--session` on a 10,000-entry session (target/synthetic-session-10000.jsonl,
     written by `cargo bench --bench session`; skipped when missing)
  3. `get_state` round trip, median of 200 sequential requests on a running process
  4. a streamed answer of 2,000 deltas (4,000 characters): `prompt` → `agent_end`
  5. peak resident memory (VmHWM) after 4
Prints medians over N runs (N processes) and the ratio reference / pi-rs.

Needs: a release build (`cargo build --release --example mock_llm --bin pi`), node + npm for
the reference (the shared `reference-pi` installs it on first use).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import REFERENCE_VERSION, parse_args, temp_home

ROOT = Path(__file__).resolve().parents[2]
LONG = "".join(f"w{i % 100:02d} " for i in range(1000))  # 4,000 characters
SCRIPT = {"rules": [{"match": "STREAM", "reply": {"text": LONG, "chunk_size": 2}}],
          "default": {"text": "ok"}}


class Rpc:
    def __init__(self, cmd, env, cwd):
        self.p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""
        self.n = 0

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.p.stdout.read1(1 << 16)
            if not chunk:
                sys.exit("pi exited early")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, obj):
        self.n += 1
        obj = dict(obj, id=f"b{self.n}")
        self.send(obj)
        while True:
            m = self.line()
            if m.get("type") == "response" and m.get("id") == obj["id"]:
                return m

    def until(self, kind):
        while True:
            if self.line().get("type") == kind:
                return

    def peak_rss_mb(self):
        for l in Path(f"/proc/{self.p.pid}/status").read_text().splitlines():
            if l.startswith("VmHWM:"):
                return int(l.split()[1]) / 1024
        return float("nan")

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def main():
    args = parse_args(runs=5)

    tmp, home, agent = temp_home("pi-rpc-bench-")
    proj = tmp / "proj"
    proj.mkdir()
    (tmp / "script.json").write_text(json.dumps(SCRIPT))
    port = 19900 + os.getpid() % 90
    server = subprocess.Popen([args.mock, "--port", str(port), "--script", str(tmp / "script.json")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}}}))
    env = dict(os.environ, HOME=str(home))
    env.pop("PI_CODING_AGENT_DIR", None)
    base = ["--mode", "rpc", "--offline", "--provider", "mock", "--model", "mock-model"]
    big = ROOT / "target/synthetic-session-10000.jsonl"

    def startup(cmd, extra):
        start = time.perf_counter()
        rpc = Rpc(cmd + base + extra, env, proj)
        rpc.request({"type": "get_state"})
        elapsed = time.perf_counter() - start
        rpc.close()
        return elapsed * 1000

    def session_copy():
        # pi refuses a session whose recorded working directory is missing: point the
        # copy's header at the project directory.
        copy = tmp / f"big-{time.monotonic_ns()}.jsonl"
        with open(big, "rb") as src, open(copy, "wb") as dst:
            header = json.loads(src.readline())
            header["cwd"] = str(proj)
            dst.write((json.dumps(header) + "\n").encode())
            shutil.copyfileobj(src, dst)
        return ["--session", str(copy)]

    def steady(cmd):
        rpc = Rpc(cmd + base + ["--no-session"], env, proj)
        rpc.request({"type": "get_state"})
        trips = []
        for _ in range(200):
            t = time.perf_counter()
            rpc.request({"type": "get_state"})
            trips.append((time.perf_counter() - t) * 1e6)
        t = time.perf_counter()
        rpc.send({"type": "prompt", "message": "STREAM please", "id": "s"})
        rpc.until("agent_end")
        stream_ms = (time.perf_counter() - t) * 1000
        rss = rpc.peak_rss_mb()
        rpc.close()
        return statistics.median(trips), stream_ms, rss

    try:
        ref = [args.reference]
        subprocess.run(ref + ["--version"], env=env, stdout=subprocess.DEVNULL)  # install/warm
        rows = []
        for name, fn in [
            ("start → get_state answered (ms)", lambda c: startup(c, ["--no-session"])),
            ("… with a 10,000-entry session (ms)", (lambda c: startup(c, session_copy())) if big.exists() else None),
        ]:
            if fn is None:
                continue
            ours = statistics.median(fn([args.pi_rs]) for _ in range(args.runs))
            theirs = statistics.median(fn(ref) for _ in range(args.runs))
            rows.append((name, ours, theirs))
        ours = [steady([args.pi_rs]) for _ in range(args.runs)]
        theirs = [steady(ref) for _ in range(args.runs)]
        for i, name in enumerate(["get_state round trip (µs)", "2,000-delta answer (ms)", "peak RSS (MB)"]):
            rows.append((name, statistics.median(r[i] for r in ours), statistics.median(r[i] for r in theirs)))
        print(f"{'benchmark':38} {'pi-rs':>10} {'pi ' + REFERENCE_VERSION:>10} {'ratio':>7}")
        for name, o, t in rows:
            print(f"{name:38} {o:10.1f} {t:10.1f} {t / o:6.1f}x")
    finally:
        server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
