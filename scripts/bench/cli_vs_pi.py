#!/usr/bin/env python3
"""Wall-clock comparison of pi-rs and the reference pi (npm, 1.6.0) from the command line.

  scripts/bench/cli_vs_pi.py [--runs N] [--pi-rs target/release/pi] [--reference CMD]
                             [--skip-reference]

Measures, for both programs, on the same loopback mock model server (restarted for every
run, so each run gets its whole script):
  1. `pi --version`
  2. `pi -p hi` in a fresh project (a new empty directory each run; the session is saved):
     the short run of issue 32
  3. a scripted print-mode task with three tool calls (read, edit, bash) and a final answer
Prints min and median of N runs of each, the median CPU time, the ratio reference / pi-rs
(medians) and the machine load.

Needs: a release build (`cargo build --release --example mock_llm --bin pi`), node for the
reference (the shared `reference-pi` installs it on first use).
"""
import json
import os
import shutil
import subprocess
import time

from benchlib import (MOCK_FLAGS, REFERENCE_VERSION, Mock, bench_env, load, measured, med,
                      parse_args, temp_home, write_models)

TASK = {
    "sequence": [
        {"text": "Let me read the file first.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "I'll fix it.", "tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt"}}]},
        {"text": "Done."},
    ],
    "default": {"text": "Done."},
}
HI = {"default": {"text": "Hello! Done."}}


def main():
    args = parse_args(runs=10)
    tmp, home, agent = temp_home("pi-bench-")
    port = 18900 + os.getpid() % 1000
    write_models(agent, port)
    env = bench_env(home)
    (tmp / "task.json").write_text(json.dumps(TASK))
    (tmp / "hi.json").write_text(json.dumps(HI))
    programs = [("pi-rs", [args.pi_rs])]
    if not args.skip_reference:
        programs.append((f"pi {REFERENCE_VERSION}", [args.reference]))
        subprocess.run([args.reference, "--version"], env=env, stdout=subprocess.DEVNULL)

    def fresh_project(a_txt):
        proj = tmp / f"proj-{time.monotonic_ns()}"
        proj.mkdir()
        if a_txt:
            (proj / "a.txt").write_text("hello wrld\n")
        return proj

    workloads = [
        ("pi --version", None, ["--version"], False, None),
        ("pi -p hi (fresh project)", "hi.json", MOCK_FLAGS + ["-p", "hi"], False, b"Done"),
        ("print-mode task (3 tool calls)", "task.json",
         MOCK_FLAGS + ["--no-session", "-p", "Fix a.txt"], True, b"Done"),
    ]
    print(load(), flush=True)
    print(f"{'benchmark':32} {'program':>9} {'min ms':>8} {'med ms':>8} {'CPU ms':>7} {'ratio':>7}")
    try:
        for name, script, extra, a_txt, expect in workloads:
            samples = {p: [] for p, _ in programs}
            mock = Mock(args.mock, tmp / script, port) if script else None
            # Alternate the programs run by run: load changes fall on both alike.
            for _ in range(args.runs):
                for prog, cmd in programs:
                    if mock:
                        mock.restart()
                    proj = fresh_project(a_txt)
                    samples[prog].append(measured(cmd + extra, env, proj, expect))
                    shutil.rmtree(proj)
            if mock:
                mock.stop()
            ours = med([s[0] for s in samples["pi-rs"]])
            for prog, _ in programs:
                walls = [s[0] for s in samples[prog]]
                ratio = f"{med(walls) / ours:6.0f}x" if prog != "pi-rs" else ""
                print(f"{name:32} {prog:>9} {min(walls) * 1000:8.1f} {med(walls) * 1000:8.1f} "
                      f"{med([s[2] for s in samples[prog]]) * 1000:7.1f} {ratio:>7}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(load())


if __name__ == "__main__":
    main()
