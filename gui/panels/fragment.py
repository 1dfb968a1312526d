"""Fragment debugger panel: one fragment of one draw stage by stage — texture lookups, lighting, each TEV stage's
operands, output and combiner buffer, fog, every per-fragment test with the values it compared, and the buffers
before and after, with the route that drew it and whether the per-stage values (the readable reference's) agree
with it. The data is ``picaemu.debug.fragment.sections`` of the engine's answer (``picaemu fragment`` on
the command line); this module only shows it as a tree (failed tests highlighted)."""

from __future__ import annotations

from picaemu.gui.models.state_tree import StateTreeModel, tree_view
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from picaemu.debug.fragment import FragmentDebug, sections


class FragmentPanel(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = StateTreeModel(self)
        self.view = tree_view(self.model, 220)
        self.label = QLabel("select a fragment in the pixel history and press Debug fragment")
        self.label.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        lay.addWidget(self.label)
        lay.addWidget(self.view)

    def show_fragment(self, frag: FragmentDebug | None, error: str = "") -> None:
        if frag is None:
            self.model.set_state(None)
            self.label.setText(error)
            return
        tree = sections(frag)
        failed = {f"{title}.result" for title, values in tree.items() if values.get("result") == "FAILED"}
        if frag.reference_differences:  # the per-stage values are not what the route drew: shown as loudly
            failed |= {"fragment.per-stage values"} | {
                f"reference differences.{k}" for k in tree["reference differences"]
            }
        self.model.set_state(tree, failed | {p.split(".")[0] for p in failed})
        self.label.setText(
            f"draw {frag.draw}, window pixel {frag.window}, fragment {frag.index + 1} of "
            f"{frag.fragments_at_pixel}: {frag.fate} ({frag.route} route)"
        )
        self.view.expandAll()
