"""Seeds 0-299 whose programs differ from eager hookgrad in a mode today, with their class.

Regenerate with ``python tools/fuzz.py --seeds 0:300 --modes compiled,functional,jnp
--show``; test_fuzz_modes.py marks these xfail(strict=True), so a fixed class shows up as
XPASS to remove here.
"""
KNOWN_MODES = {
    "compiled": {},
    "functional": {
    },
    "jnp": {},
}
