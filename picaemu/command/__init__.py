"""Command processing: the packet grammar, a builder of command buffers, and the register state machine."""
