#!/usr/bin/env python3
"""Wall-clock comparison of pi-rs and the reference pi (npm, 0.73.1) from the command line.

  scripts/bench/cli_vs_pi.py [--runs N] [--pi-rs target/release/pi] [--reference CMD]

Measures, for both programs, on the same loopback mock model server:
  1. `pi --version`
  2. a scripted print-mode task with three tool calls (read, edit, bash) and a final answer
Prints the median of N runs of each and the ratio reference / pi-rs.

Needs: a release build (`cargo build --release --example mock_llm --bin pi`), node + npm
for the reference (`tests/support/reference-pi.sh` installs it on first use).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import parse_args, temp_home

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = {
    "sequence": [
        {"text": "Let me read the file first.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "I'll fix it.", "tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt"}}]},
        {"text": "Done."},
    ],
    "default": {"text": "Done."},
}


def timed(cmd, env, cwd):
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"command failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr.decode()}")
    return elapsed


def median_ms(samples):
    return statistics.median(samples) * 1000


def main():
    args = parse_args(runs=10)

    tmp, home, agent = temp_home("pi-bench-")
    (tmp / "script.json").write_text(json.dumps(SCRIPT))
    port = 18900 + os.getpid() % 1000
    server = subprocess.Popen([args.mock, "--port", str(port), "--script", str(tmp / "script.json")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    (agent / "models.json").write_text(json.dumps({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}}}))
    env = dict(os.environ, HOME=str(home), PI_OFFLINE="1")
    env.pop("PI_CODING_AGENT_DIR", None)
    task_args = ["--offline", "--provider", "mock", "--model", "mock-model", "--no-session", "-p", "Fix a.txt"]

    def task_runner(cmd):
        samples = []
        for _ in range(args.runs):
            proj = tmp / f"proj-{len(samples)}-{time.monotonic_ns()}"
            proj.mkdir()
            (proj / "a.txt").write_text("hello wrld\n")
            samples.append(timed(cmd + task_args, env, proj))
            shutil.rmtree(proj)
        return samples

    try:
        ref = [args.reference]
        timed(ref + ["--version"], env, tmp)  # install / warm caches
        rows = []
        for name, ours_cmd, ref_cmd, runner in [
            ("pi --version", [args.pi_rs, "--version"], ref + ["--version"], None),
            ("print-mode task (3 tool calls)", [args.pi_rs], ref, task_runner),
        ]:
            if runner is None:
                ours = [timed(ours_cmd, env, tmp) for _ in range(args.runs)]
                theirs = [timed(ref_cmd, env, tmp) for _ in range(args.runs)]
            else:
                ours = runner(ours_cmd)
                theirs = runner(ref_cmd)
            rows.append((name, median_ms(ours), median_ms(theirs)))
        print(f"{'benchmark':34} {'pi-rs':>10} {'pi 0.73.1':>11} {'ratio':>8}")
        for name, ours, theirs in rows:
            print(f"{name:34} {ours:8.1f}ms {theirs:9.1f}ms {theirs / ours:7.0f}x")
    finally:
        server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
