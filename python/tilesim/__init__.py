"""tilesim for Python: which distributed attention schedule is fastest on a cluster.

The functions return what the CLI prints with ``--json`` (the same C++ code makes both):

    import tilesim
    r = tilesim.simulate("scenarios/ring-256k.yaml", overrides={"schedule.gpus": 64})
    r.makespan_s, r.speedup, r.to_dict()
    rows = tilesim.compare("scenarios/mesh-1m-256.yaml", schedules="ring,usp,mesh:auto")
    pandas.DataFrame(rows)

A scenario is a path to a YAML file or a dict of the same fields; a dict's relative paths
(topology, calibration) resolve from ``base_dir`` (default: the current directory). Overrides
are ``{"key.path": value}``, as ``--set key.path=value``. Bad input raises InputError, which
names the file, line and key like the CLI's message.
"""

import json
import os

from . import _core

__all__ = ["InputError", "SimulationError", "Result", "simulate", "sweep", "compare",
           "compare_document", "tune", "tune_document", "plan", "report"]


class InputError(ValueError):
    """Bad input: `file`, `line` (1-based, 0 when unknown), `key` and what was `expected`."""

    def __init__(self, file, line, key, expected):
        self.file, self.line, self.key, self.expected = file, line, key, expected
        where = f"{file}:{line}" if line > 0 else file
        super().__init__(f"{where}: key '{key}': {expected}" if key else f"{where}: {expected}")


class SimulationError(RuntimeError):
    """A simulation that could not finish (e.g. simulated time beyond the simulator's range)."""


class Result:
    """A document's fields as attributes (r.makespan_s); to_dict() gives the document."""

    def __init__(self, doc):
        self._doc = doc
        for key, value in doc.items():
            setattr(self, key, value)

    def to_dict(self):
        return json.loads(json.dumps(self._doc))  # a deep copy

    def __repr__(self):
        keys = ", ".join(f"{k}={self._doc[k]!r}" for k in list(self._doc)[:6])
        return f"Result({keys}, ...)"


def _source(scenario, base_dir):
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    if isinstance(scenario, dict):
        # Indented JSON is YAML with one key per line, so errors point at a useful line.
        name = os.path.join(base_dir or os.getcwd(), "<scenario dict>")
        return name, json.dumps(scenario, indent=1)
    raise TypeError("scenario: a path to a YAML file or a dict, got " + type(scenario).__name__)


def _overrides(overrides):
    out = []
    for key, value in (overrides or {}).items():
        text = value if isinstance(value, str) else json.dumps(value)  # JSON values are YAML
        out.append(f"{key}={text}")
    return out


def _call(function, scenario, overrides, base_dir, *args):
    path, text = _source(scenario, base_dir)
    doc = json.loads(function(path, text, _overrides(overrides), *args))
    if "error" not in doc:
        return doc["value"]
    error = doc["error"]
    if error["kind"] == "input":
        raise InputError(error["file"], error["line"], error["key"], error["expected"])
    raise SimulationError(error["what"])


def simulate(scenario, overrides=None, *, base_dir=None, wall_clock=True):
    """The result JSON of one simulation (`tilesim simulate --json`) as a Result."""
    return Result(_call(_core.simulate, scenario, overrides, base_dir, wall_clock))


def sweep(scenario, gpus, overrides=None, *, base_dir=None, wall_clock=True):
    """One dict per GPU count (`tilesim sweep --json`)."""
    return _call(_core.sweep, scenario, overrides, base_dir, list(gpus), wall_clock)


def compare_document(scenario, schedules="ring,mesh:auto", overrides=None, *, base_dir=None,
                     wall_clock=True):
    """`tilesim compare --json`: scenario, gpus, ring_bytes_per_rank and the schedule rows."""
    return _call(_core.compare, scenario, overrides, base_dir, schedules, wall_clock)


def compare(scenario, schedules="ring,mesh:auto", overrides=None, **kwargs):
    """One dict per schedule; a schedule that cannot run has `left_out` (the reason)."""
    return compare_document(scenario, schedules, overrides, **kwargs)["schedules"]


def tune_document(scenario, overrides=None, *, top=10, memory_budget=None, base_dir=None,
                  wall_clock=True):
    """`tilesim tune --json`: the `top` fastest candidates and those left out, with reasons."""
    overrides = dict(overrides or {})
    if memory_budget is not None:
        overrides["schedule.memory_budget"] = memory_budget
    return _call(_core.tune, scenario, overrides, base_dir, top, wall_clock)


def tune(scenario, overrides=None, **kwargs):
    """The fastest candidates (schedule x tile x placement), best first, one dict each."""
    return tune_document(scenario, overrides, **kwargs)["top"]


def plan(scenario, overrides=None, *, ops=True, base_dir=None):
    """The validated plan (`tilesim plan --json --dump`): totals, and per rank its figures and
    (with ops) its ops in program order: kind, pass, text, peer, comm_group, reads, writes."""
    return Result(_call(_core.plan, scenario, overrides, base_dir, ops))


def report(scenario, path, *, gpus=(), schedules="", overrides=None, base_dir=None):
    """Writes `tilesim report`'s self-contained HTML page to `path`; returns the path."""
    html = _call(_core.report, scenario, overrides, base_dir, list(gpus), schedules)
    temp = f"{path}.tmp.{os.getpid()}"
    with open(temp, "w", encoding="utf-8") as out:
        out.write(html)
    os.replace(temp, path)  # whole or not at all
    return path
