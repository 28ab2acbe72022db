"""Primitive families, each primitive with all of its rules side by side."""
