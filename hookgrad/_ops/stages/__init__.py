"""The stages an op call passes through, in ``dispatch.apply``'s order (see there)."""
