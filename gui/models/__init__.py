"""Qt item models over immutable snapshots (format lazily in ``data()``)."""
