import os
import sys

import pytest

# NOTE: tiered execution (hookgrad/_ops/tiered.py) computes a program's first calls with
# NumPy and later ones with XLA, switching when a background compile ends: values may then
# differ in the last bits from run to run. The suite compares modes bit for bit, so it runs
# with every program compiled at first sight; tests/ops/test_tiered.py turns tiering on and
# runs the op table, a training loop and the switch itself through it.
os.environ.setdefault("HOOKGRAD_TIERED", "0")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("HOOKGRAD_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow tier: set HOOKGRAD_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="module")
def _background_compiles_end_with_their_module():
    """Each test module starts with the background compiler's queue empty: the compiles
    a module left queued (the fuzz window's, with tiered execution on, leaves hundreds)
    would otherwise run on during the next modules' tests and hold up their
    ``tiered.wait()``. A dropped compile's program compiles at its next call instead."""
    yield
    tiered = sys.modules.get("hookgrad._ops.tiered")
    if tiered is not None and tiered._pool:
        tiered._pool.pop().shutdown()
