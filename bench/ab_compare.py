#!/usr/bin/env python3
"""Two builds of zt_bench, run alternately in the same session: did anything
measured get slower between them?

usage: ab_compare.py OLD_ZT_BENCH NEW_ZT_BENCH [--rounds N] [--reps R]
                     [--workloads large,mixed,small,many100k] [--numpy-script P]

Each round runs, for each workload, `zt_bench --only W --reps R` of the old
build, then of the new one (the order flips every round, so neither always
runs on the warmer machine). zt_bench compares libztensor with a baseline
measured in the same process (pread, the original's writer, numpy); this
script compares those ratios between the builds, row by row: new ratio /
old ratio, the median over rounds. Ratios against a same-run baseline are
what moves least on a shared machine; a row is flagged when the new build's
ratio is below 0.9x the old one's in the median. Rows only one build has
(new measurements) are listed apart.

Not part of `meson test`: it takes minutes (bench/run.sh builds zt_bench).
"""
import argparse
import statistics
import subprocess
import sys


def rows_of(output):
    """{(measure, workload): ratio} from zt_bench's markdown table."""
    out = {}
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or cells[0] in ("measure", "---"):
            continue
        try:
            ratio = float(cells[4])
        except ValueError:
            continue  # report-only rows ("—")
        out[(cells[0], cells[1])] = ratio
    return out


def run(binary, workload, reps, numpy_script):
    cmd = [binary, "--only", workload, "--reps", str(reps)]
    if numpy_script:
        cmd += ["--numpy-script", numpy_script]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return rows_of(done.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workloads", default="large,mixed,small,many100k")
    ap.add_argument("--numpy-script", default=None)
    args = ap.parse_args()

    old, new = {}, {}
    for r in range(args.rounds):
        for w in args.workloads.split(","):
            order = [(args.old, old), (args.new, new)]
            if r % 2:
                order.reverse()
            for binary, into in order:
                for key, ratio in run(binary, w, args.reps, args.numpy_script).items():
                    into.setdefault(key, []).append(ratio)
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)

    both = sorted(set(old) & set(new), key=lambda k: (k[1], k[0]))
    print("| measure | workload | old ratio | new ratio | new / old | |")
    print("| --- | --- | --- | --- | --- | --- |")
    flagged = 0
    for key in both:
        o, n = statistics.median(old[key]), statistics.median(new[key])
        rel = n / o if o else float("inf")
        flag = "**slower**" if rel < 0.9 else ""
        flagged += bool(flag)
        print(f"| {key[0]} | {key[1]} | {o:.2f} | {n:.2f} | {rel:.2f} | {flag} |")
    only_new = sorted(set(new) - set(old), key=lambda k: (k[1], k[0]))
    if only_new:
        print("\nRows only the new build measures (its ratio to its own same-run baseline, median):\n")
        print("| measure | workload | new ratio |")
        print("| --- | --- | --- |")
        for key in only_new:
            print(f"| {key[0]} | {key[1]} | {statistics.median(new[key]):.2f} |")
    print(f"\n{len(both)} rows compared, {flagged} below 0.9x of the old build's ratio")


if __name__ == "__main__":
    main()
