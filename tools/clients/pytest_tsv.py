"""pytest plugin: writes one line per test, "node-id<TAB>status" (ok, fail, error, skip, xfail, xpass), to the file
named by $CUEMU_SUITE_TSV when the session ends, in the format tools/clients/compare.py reads.

Works with pytest-xdist (the controller receives every worker's reports; a test whose worker crashed is a "fail").
Newlines and tabs in parametrised ids are written as \\n and \\t. Each test's line is also appended to the file
as soon as the test ends, so a run stopped from outside (a time limit) leaves the results it had; the file is
rewritten, sorted, when the session ends.
"""
import os

_results = {}


def _line(name, status):
    return name.replace("\t", "\\t").replace("\n", "\\n") + "\t" + status + "\n"


def _append(name):
    path = os.environ.get("CUEMU_SUITE_TSV")
    if path:
        with open(path, "a") as f:
            f.write(_line(name, _results[name]))


def _status(report):
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            return "xpass" if xfail else "ok"
        if report.skipped:
            return "xfail" if xfail else "skip"
        return "fail"
    if report.failed:
        return "error"
    if report.skipped:
        return "xfail" if xfail else "skip"
    return None  # a passing setup or teardown says nothing on its own


def pytest_runtest_logreport(report):
    status = _status(report)
    if status is None and report.when == "setup":
        _results.setdefault(report.nodeid, "error")  # replaced by the call's status
    elif status is not None and not (report.when == "teardown" and _results.get(report.nodeid) not in (None, "ok", "xpass")):
        _results[report.nodeid] = status  # a teardown error after a failed call keeps the call's failure
    if report.when not in ("setup", "call"):
        _append(report.nodeid)  # the teardown, or the report of a crashed worker: the test's status is final


def pytest_collectreport(report):
    # A module that fails to import is one "error" line under its own path (its tests are never known).
    if report.failed:
        _results[report.nodeid or "<collection>"] = "error"


def pytest_sessionstart(session):
    path = os.environ.get("CUEMU_SUITE_TSV")
    if path and not hasattr(session.config, "workerinput"):
        open(path, "w").close()


def pytest_sessionfinish(session):
    path = os.environ.get("CUEMU_SUITE_TSV")
    if not path or hasattr(session.config, "workerinput"):
        return
    with open(path, "w") as f:
        for name in sorted(_results):
            f.write(_line(name, _results[name]))
