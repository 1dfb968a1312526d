"""Dockable debugger panels."""
