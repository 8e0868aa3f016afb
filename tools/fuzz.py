"""Differential fuzzing of hookgrad from the command line, in each of its modes.

    python tools/fuzz.py --seeds 0:300            # eager vs PyTorch: counts and classes
    python tools/fuzz.py --seeds 17 --show        # one program, shrunk, as PyTorch code
    python tools/fuzz.py --seeds 0:300 --modes eager,compiled,functional
    python tools/fuzz.py --examples 1000          # hypothesis-drawn programs (derandomized)

Each seed is a random program (tests/fuzz/_programs.py); ``--examples N`` has hypothesis
draw N programs of the same generator instead (the CI tests' draw). Programs mix the
generator's own steps with rows of the op table (tests/fuzz/_table.py; the first line
says how many rows are drawn, the per-feature table counts them as ``table/<family>``).
``eager`` runs a program under hookgrad and PyTorch (without torch: its pure-op part
against ``jax.grad`` of the same program in ``jax.numpy``, mode ``jnp``, which takes
programs without op-table rows); ``compiled`` runs it inside ``hookgrad.compile`` and
``functional`` under ``jax.grad`` of ``hookgrad.func.functional_call`` (``functional_jit``:
that gradient under ``jax.jit``), all compared with eager hookgrad (tests/fuzz/_modes.py).
A difference is shrunk to the fewest lines that keep it and named by its class (what
differs @ the step where it shows). Programs a mode does not take are skipped, and
documented differences counted, under named docs/differences.md rules.
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODES = ("eager", "compiled", "functional", "functional_jit", "jnp")


def _seeds(text):
    if ":" in text:
        a, b = text.split(":")
        return range(int(a), int(b))
    return [int(s) for s in text.split(",")]


def _checker(mode, torch):
    import hookgrad
    from tests.fuzz import _harness, _modes
    if mode == "eager":
        return lambda seed, program, shrink: _harness.check(seed, hookgrad, torch, shrink=shrink,
                                                            program=program)
    return lambda seed, program, shrink: _modes.check(seed, hookgrad, mode, shrink=shrink,
                                                      program=program)


def _examples(n, table):
    """``n`` programs hypothesis draws (derandomized: the same on every run)."""
    from hypothesis import given
    from tests.fuzz._mode_run import fuzz_settings
    from tests.fuzz._programs import programs
    out = []

    @fuzz_settings(n)
    @given(programs(table))
    def collect(program):
        out.append(program)
    collect()
    return out


def _cases(args, mode):
    """``(id, program)`` pairs: seeds (the program drawn when checked) or examples."""
    if args.examples is None:
        return [(seed, None) for seed in _seeds(args.seeds)]
    return list(enumerate(_examples(args.examples, mode != "jnp")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:100", help="a:b range or comma list (default 0:100)")
    ap.add_argument("--modes", default="eager",
                    help="comma list of " + ", ".join(MODES) + " (default eager)")
    ap.add_argument("--examples", type=int, default=None,
                    help="N hypothesis-drawn programs instead of --seeds")
    ap.add_argument("--show", action="store_true", help="print every differing program")
    ap.add_argument("--no-shrink", action="store_true", help="report programs unshrunk")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown mode {bad[0]!r}: expected one of {', '.join(MODES)}")

    try:
        import torch
    except ImportError:
        torch = None
    if "eager" in modes and torch is None:
        print("tools/fuzz.py: PyTorch is not installed; eager mode runs as jnp "
              "(jax.grad of the program in jax.numpy)")
        modes = [m if m != "eager" else "jnp" for m in dict.fromkeys(modes)]
    from tests.fuzz._modes import features
    from tests.fuzz._table import summary as table_summary
    print(table_summary())

    summary, failed = [], False
    per_feature = collections.defaultdict(collections.Counter)
    for mode in modes:
        check = _checker(mode, torch)
        counts = collections.Counter()
        classes = collections.defaultdict(list)
        rules = collections.Counter()
        t0 = time.time()
        for seed, program in _cases(args, mode):
            res = check(seed, program, not args.no_shrink)
            counts[res.status] += 1
            for r in res.used:
                rules[r] += 1
            if res.status == "skipped":
                rules[res.rule] += 1
                continue
            for f in features(res.program):
                per_feature[f][mode] += 1
            if res.status == "differs":
                classes[res.cls].append(seed)
                if args.show:
                    print(res.report(), "\n")
        print(f"== {mode}")
        for cls, seeds in sorted(classes.items(), key=lambda kv: -len(kv[1])):
            print(f"{len(seeds):4d}  {cls}  seeds {' '.join(map(str, seeds[:12]))}")
        compared = counts["same"] + counts["differs"]
        print(f"rules: {dict(sorted(rules.items()))}  ({time.time() - t0:.0f}s)")
        line = (f"{mode}: compared {compared}, differing {counts['differs']}, skipped by "
                f"rule {counts['skipped']}; classes {len(classes)}")
        print(line + (": " + "; ".join(f"{c} x{len(s)}" for c, s in classes.items())
                      if classes else ""))
        summary.append(line)
        failed |= bool(counts["differs"])
    print("programs run per feature (compared, not skipped):")
    print(f"  {'feature':24s}" + "".join(f"{m:>11s}" for m in modes))
    for f in sorted(per_feature):
        print(f"  {f:24s}" + "".join(f"{per_feature[f][m]:11d}" for m in modes))
    print("summary: " + " | ".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
