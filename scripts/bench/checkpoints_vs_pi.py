#!/usr/bin/env python3
"""Checkpoints in a big repository, through the built binaries: one print-mode prompt whose
model runs one `bash` command in a 100,000-file git repository, for pi-rs with checkpoints
on, the same with `checkpoints.enabled: false`, and the reference pi (1.6.0).

  scripts/bench/checkpoints_vs_pi.py [--runs N] [--files 100000] [--pi-rs target/release/pi]
                                     [--reference CMD] [--skip-reference]

The repository (target/bench-repo-<files>: 1,000 directories of 100 small files, one
commit) is made on first use. The command changes one tracked file and creates an
untracked one (`bash` is the first of the session, as in every print-mode run); both are
put back between runs, outside the timing. Every run gets a fresh mock model server.

Rows:
  checkpoints on          pi-rs, the same HOME for every run (its checkpoint store kept)
  checkpoints on, new store   pi-rs, a new HOME for every run (an empty store)
  checkpoints off         pi-rs with checkpoints.enabled: false
  pi                      the reference pi
Prints min / median wall time, median CPU time (user + system), peak RSS, the ratios
(on / off, pi / on) and the machine load. Runs of the rows alternate, so load changes
during the run fall on all of them alike.

Needs: `cargo build --release --bin pi --example mock_llm`, git, node for the reference.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchlib import (MOCK_FLAGS, REFERENCE_VERSION, ROOT, Mock, add_common, bench_env,
                      check_binaries, load, measured, med, temp_home, write_models)

COMMAND = "echo changed >> pkg_00/mod_000/file_000.rs && echo new > new-file.txt && echo ok"
SCRIPT = {"sequence": [{"tool_calls": [{"name": "bash", "arguments": {"command": COMMAND}}]},
                       {"text": "Done: ran it."}],
          "default": {"text": "Done: ran it."}}


def git(repo, *args):
    subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=bench", *args], cwd=repo,
                   check=True, stdout=subprocess.DEVNULL)


def make_repo(files):
    repo = ROOT / f"target/bench-repo-{files}"
    if (repo / ".git").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    dirs = max(1, files // 100)
    for d in range(dirs):
        sub = repo / f"pkg_{d // 100:02}" / f"mod_{d:03}"
        sub.mkdir(parents=True, exist_ok=True)
        for f in range(files // dirs):
            (sub / f"file_{f:03}.rs").write_text(f"// module {d}, file {f}\npub fn f() -> u32 {{ {f} }}\n")
    git(repo, "init", "-q")
    time.sleep(1.1)  # the index is written a clock tick after the files: nothing racily clean
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bench")
    return repo


def reset(repo):
    git(repo, "checkout", "-q", "--", "pkg_00/mod_000/file_000.rs")
    (repo / "new-file.txt").unlink(missing_ok=True)
    # `git status` refreshes the index as a user's shell prompt would.
    git(repo, "status", "--short")


def main():
    ap = argparse.ArgumentParser()
    add_common(ap, runs=5)
    ap.add_argument("--files", type=int, default=100000)
    args = ap.parse_args()
    check_binaries(args)
    repo = make_repo(args.files)
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"pi-bench-ckpt-{os.getpid()}"
    tmp.mkdir()
    (tmp / "script.json").write_text(json.dumps(SCRIPT))
    port = 21900 + os.getpid() % 90
    mock = Mock(args.mock, tmp / "script.json", port)

    def home(name, settings=None):
        _, h, agent = temp_home(f"pi-bench-{name}-")
        write_models(agent, port)
        if settings:
            (agent / "settings.json").write_text(json.dumps(settings))
        return h

    rows = {
        "checkpoints on": ([args.pi_rs], lambda: on_home),
        "checkpoints on, new store": ([args.pi_rs], lambda: home("new")),
        "checkpoints off": ([args.pi_rs], lambda: off_home),
    }
    on_home = home("on")
    off_home = home("off", {"checkpoints": {"enabled": False}})
    if not args.skip_reference:
        ref_home = home("ref")
        rows[f"pi {REFERENCE_VERSION}"] = ([args.reference], lambda: ref_home)
        subprocess.run([args.reference, "--version"], env=bench_env(ref_home), stdout=subprocess.DEVNULL)
    results = {name: [] for name in rows}
    print(f"{args.files:,} files in {repo}; {load()}", flush=True)
    try:
        for _ in range(args.runs):
            for name, (cmd, get_home) in rows.items():
                reset(repo)
                mock.restart()
                h = get_home()
                results[name].append(measured(cmd + MOCK_FLAGS + ["-p", "Run the command."],
                                              bench_env(h), repo, expect=b"Done"))
                if name == "checkpoints on, new store":
                    shutil.rmtree(h.parent, ignore_errors=True)
        reset(repo)
    finally:
        mock.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'row':>28} {'min ms':>8} {'med ms':>8} {'CPU ms':>8} {'peak RSS MB':>12}")
    for name, samples in results.items():
        walls = [s[0] for s in samples]
        print(f"{name:>28} {min(walls) * 1000:8.0f} {med(walls) * 1000:8.0f} "
              f"{med([s[2] for s in samples]) * 1000:8.0f} {max(s[1] for s in samples):12.1f}")
    on = med([s[0] for s in results["checkpoints on"]])
    off = med([s[0] for s in results["checkpoints off"]])
    print(f"on / off (median wall): {on / off:.2f}x (goal: at most 1.5x)")
    ref_name = f"pi {REFERENCE_VERSION}"
    if ref_name in results:
        ref = med([s[0] for s in results[ref_name]])
        print(f"pi / on (median wall): {ref / on:.1f}x faster (goal: at least 5x)")
    print(load())


if __name__ == "__main__":
    main()
