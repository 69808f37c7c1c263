"""Seeded task generators, one module per domain."""
