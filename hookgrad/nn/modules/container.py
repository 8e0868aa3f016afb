"""Containers: Sequential, ModuleList, ModuleDict (filled by the nn work)."""
