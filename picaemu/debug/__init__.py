"""The debugger engine, Qt-free: what the GUI, the CLI and Python scripts ask of a capture beyond plain replay.

Receives a ``picaemu.replay.Replay``; produces answers about any position of it:

- ``timeline``: the index of a capture (frames -> events -> command lists -> draws -> packets -> writes),
  ``Cursor`` positions and the stepping / breakpoint rules over them;
- ``session``: ``Session``, a replay that can be moved to any ``Cursor`` (backwards and forwards, from the
  nearest checkpoint), with the per-draw register states and bounds the index recorded;
- ``probe``: re-running one draw with the pipeline's fragment observer (exact fragment fates, pixel history,
  overlays);
- ``state_views``: readable views of a state (bound textures, shader setup with uniform names, a draw's vertices
  through the geometry front end);
- ``why`` (with ``why_detail``): where a draw's work went, stage by stage, and why it shows nothing;
- ``snapshot`` / ``jobs``: immutable snapshots of a position and the jobs the GUI's worker runs to get them.

``picaemu.gui`` shows these in Qt; nothing here imports Qt.
"""
