"""pytest plugin: runs only the tests named in the file $CUEMU_SUITE_SELECT (one node id a line, '#' comments), in
that file's order, so that a GPU and cuemu run the same sample of a suite too large to run whole (CuPy's
cupyx.scipy.ndimage and signal tests: 35,000 parametrised tests). A name the collection does not produce is
ignored (no "not found" error that would stop the run); a line without "::" (a folder or a file) names every
test under it, at that line's place. The other tests are deselected. Without the variable it does nothing. Loaded by `-p pytest_select` (run-cupy-suite.sh's named lists).
"""
import os


def pytest_collection_modifyitems(config, items):
    path = os.environ.get("CUEMU_SUITE_SELECT")
    if not path:
        return
    order = {}
    for line in open(path):
        name = line.rstrip("\n")
        if name and not name.startswith("#"):
            order.setdefault(name, len(order))
    prefixes = [(name.rstrip("/") + ("/" if "." not in name.rsplit("/", 1)[-1] else "::"), place)
                for name, place in order.items() if "::" not in name]

    def place(item):
        if item.nodeid in order:
            return order[item.nodeid]
        return next((where for prefix, where in prefixes if item.nodeid.startswith(prefix)), None)

    places = {item.nodeid: place(item) for item in items}
    chosen = sorted((item for item in items if places[item.nodeid] is not None), key=lambda item: places[item.nodeid])
    dropped = [item for item in items if places[item.nodeid] is None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = chosen
