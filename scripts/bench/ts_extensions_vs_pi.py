#!/usr/bin/env python3
"""Start-up with three of pi's TypeScript extensions (permission-gate, protected-paths,
pirate from the reference pi's examples) in ~/.pi/agent/extensions/: time from start to
the first frame with the footer drawn, and to the first answer of a prompt (which needs
the extensions loaded), for pi-rs and the reference pi (npm, 0.73.1), on a pseudo-terminal
against the loopback mock model server. Prints the medians and the ratios pi / pi-rs.

  scripts/bench/ts_extensions_vs_pi.py [--runs 5] [--pi-rs target/release/pi]

Needs: `cargo build --release --bin pi --example mock_llm`, node and npm (the reference pi
is installed by tests/support/reference-pi.sh on first use).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tui_vs_pi import Pty, setup  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["permission-gate.ts", "protected-paths.ts", "pirate.ts"]


def examples_dir():
    base = Path(os.environ.get("PI_REFERENCE_DIR", Path.home() / ".cache/pi-reference"))
    return base / "0.73.1/node_modules/@mariozechner/pi-coding-agent/examples/extensions"


def one_run(argv, env, proj):
    start = time.perf_counter()
    p = Pty(argv, env, proj)
    try:
        p.wait_for(b"mock-model", timeout=120)
        first = (time.perf_counter() - start) * 1000
        p.drain(0.05)
        p.write(b"hello\r")
        p.wait_for(b"ANSWER-DONE", timeout=120)
        answered = (time.perf_counter() - start) * 1000
    finally:
        p.kill()
    return first, answered


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pi-rs", default=str(ROOT / "target/release/pi"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/examples/mock_llm"))
    args = ap.parse_args()
    args.pi_rs, args.mock = (str(Path(p).resolve()) for p in (args.pi_rs, args.mock))
    for p in (args.pi_rs, args.mock):
        if not Path(p).exists():
            sys.exit(f"missing {p}: cargo build --release --bin pi --example mock_llm")
    subprocess.run(["bash", str(ROOT / "tests/support/reference-pi.sh"), "--version"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tmp = Path(tempfile.mkdtemp(prefix="pi-ts-bench-"))
    server = None
    try:
        script = {"sequence": [], "default": {"text": "ANSWER-DONE"}}
        (tmp / "script.json").write_text(json.dumps(script))
        port = 19800 + os.getpid() % 150
        server = subprocess.Popen([args.mock, "--port", str(port), "--script", str(tmp / "script.json")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        env, proj = setup(tmp, port)
        ext_dir = Path(env["HOME"]) / ".pi/agent/extensions"
        ext_dir.mkdir(parents=True)
        for name in EXAMPLES:
            shutil.copy(examples_dir() / name, ext_dir / name)
        reference = [str(ROOT / "tests/support/reference-pi.sh")]
        results = {}
        for name, argv in (("pi-rs", [args.pi_rs]), ("pi", reference)):
            one_run(argv, env, proj)  # warm-up: caches (pi-rs's compiled TypeScript, node's)
            runs = [one_run(argv, env, proj) for _ in range(args.runs)]
            results[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        for name, (first, answered) in results.items():
            print(f"{name:6} first frame {first:7.0f} ms   first answer {answered:7.0f} ms")
        print(f"ratio pi / pi-rs: first frame {results['pi'][0] / results['pi-rs'][0]:.1f}x, "
              f"first answer {results['pi'][1] / results['pi-rs'][1]:.1f}x")
    finally:
        if server:
            server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
