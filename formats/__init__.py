"""Byte formats: captures, shader binaries, images (bytes <-> typed objects, nothing else)."""
