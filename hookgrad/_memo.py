"""A bounded memo: what a hot path works out once per key (a shape, a geometry, an
index) and keeps in a plain dict, read with ``dict.get`` where it is used."""

BOUND = 4096  # keys kept per memo: a model's few hundred, and room for a loop's


def keep(memo, key, value):
    """``value``, kept in ``memo`` under ``key``; a full ``memo`` is emptied first (keys
    that change every step, such as a loop's positions, refill it rather than grow it)."""
    if len(memo) >= BOUND:
        memo.clear()
    memo[key] = value
    return value
