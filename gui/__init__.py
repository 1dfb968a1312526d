"""The Qt debugger (PySide6). Uses picaemu and picaemu.formats; the core never imports it."""
