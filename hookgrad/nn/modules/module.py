"""Module (filled by the nn work)."""
