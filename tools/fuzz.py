"""Differential fuzzing of hookgrad against PyTorch from the command line.

    python tools/fuzz.py --seeds 0:300            # counts and classes, last line a summary
    python tools/fuzz.py --seeds 17 --show        # one program, shrunk, as PyTorch code

Each seed is a random program (tests/fuzz/_programs.py) run under both libraries; a
difference is shrunk to the fewest lines that keep it and named by its class (what
differs @ the step where it shows). Known README differences are counted under their rule.
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _seeds(text):
    if ":" in text:
        a, b = text.split(":")
        return range(int(a), int(b))
    return [int(s) for s in text.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:100", help="a:b range or comma list (default 0:100)")
    ap.add_argument("--show", action="store_true", help="print every differing program")
    ap.add_argument("--no-shrink", action="store_true", help="report programs unshrunk")
    args = ap.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("tools/fuzz.py: PyTorch is not installed; nothing to compare against")
        return 2
    import hookgrad
    from tests.fuzz._harness import check

    counts = collections.Counter()
    classes = collections.defaultdict(list)
    rules = collections.Counter()
    t0 = time.time()
    for seed in _seeds(args.seeds):
        res = check(seed, hookgrad, torch, shrink=not args.no_shrink)
        counts[res.status] += 1
        for r in res.used:
            rules[r] += 1
        if res.status == "skipped":
            rules[res.rule] += 1
        elif res.status == "differs":
            classes[res.cls].append(seed)
            if args.show:
                print(res.report(), "\n")
    for cls, seeds in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(seeds):4d}  {cls}  seeds {' '.join(map(str, seeds[:12]))}")
    compared = counts["same"] + counts["differs"]
    print(f"rules: {dict(rules)}  ({time.time() - t0:.0f}s)")
    print(f"compared {compared}, differing {counts['differs']}, skipped by rule "
          f"{counts['skipped']}; classes {len(classes)}: "
          + "; ".join(f"{c} x{len(s)}" for c, s in classes.items()))
    return 1 if counts["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
