"""Reports over replays: statistics (``stats``, ATTILA's per-batch / per-frame counters), their figure (``plot``)
and picture comparison for CI (``imagediff``)."""
