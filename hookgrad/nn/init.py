"""Weight initialisation (filled by the nn work)."""
