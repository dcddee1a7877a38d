"""The Python package against the CLI: the same documents for simulate, sweep, compare and
tune on shipped scenarios (the CLI's --json output is the reference: one C++ code path makes
both, and these tests check the bindings pass it through unchanged), plus figures with closed
forms and the errors' fields. Run by ctest (python_api) with PYTHONPATH at the built package and
TILESIM_CLI at the built CLI, from the source root."""

import json
import os
import subprocess

import pytest

import tilesim

CLI = os.environ.get("TILESIM_CLI", "build/tilesim")
RING = "scenarios/ring-256k.yaml"
MESH = "scenarios/mesh-1m-256.yaml"
GIB = 1024 ** 3


def cli_json(*args):
    out = subprocess.run([CLI, *args, "--json", "--no-wall-clock"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def test_simulate_equals_cli():
    r = tilesim.simulate(RING, wall_clock=False)
    assert r.to_dict() == cli_json("simulate", RING)
    assert r.makespan_s == r.to_dict()["makespan_s"]
    # Ring forward: P (P - 1) chunks of S/P tokens x 2 (K, V) x 32 heads x 128 x 2 bytes.
    assert r.comm_bytes_total == 8 * 7 * (2 * 32768 * 32 * 128 * 2)
    assert r.comm_bytes_total == 28 * GIB


def test_overrides_equal_set():
    r = tilesim.simulate(RING, overrides={"schedule.gpus": 4}, wall_clock=False)
    assert r.gpus == 4
    assert r.to_dict() == cli_json("simulate", RING, "--set", "schedule.gpus=4")


def test_dict_scenario_equals_file():
    scenario = {
        "name": "ring-256k", "topology": "../topologies/h100-cluster.yaml",
        "attention": {"seq_len": "256K", "batch": 1, "heads": 32, "kv_heads": 32,
                      "head_dim": 128, "dtype": "bf16", "causal": False, "pass": "forward"},
        "schedule": {"kind": "ring", "gpus": 8},
    }
    r = tilesim.simulate(scenario, base_dir="scenarios", wall_clock=False)
    assert r.to_dict() == cli_json("simulate", RING)


def test_sweep_equals_cli():
    rows = tilesim.sweep(RING, [4, 8, 16], wall_clock=False)
    assert rows == cli_json("sweep", RING, "--gpus", "4,8,16")
    assert [row["gpus"] for row in rows] == [4, 8, 16]


def test_compare_equals_cli():
    rows = tilesim.compare(MESH, "ring,usp,mesh:16x16", wall_clock=False)
    assert rows == cli_json("compare", MESH, "--schedules", "ring,usp,mesh:16x16")["schedules"]
    ring = rows[0]
    assert ring["schedule"] == "ring" and ring["bytes_vs_ring"] == 1.0


def test_tune_equals_cli():
    doc = tilesim.tune_document(RING, wall_clock=False)
    assert doc == cli_json("tune", RING)
    rows = tilesim.tune(RING, wall_clock=False)
    assert rows == doc["top"]
    makespans = [row["makespan_s"] for row in rows]
    assert makespans == sorted(makespans)


def test_plan_has_ops_per_rank():
    p = tilesim.plan(RING)
    assert p.gpus == 8 and len(p.ranks) == 8
    # Ring forward on P ranks: P computes, P - 1 sends and P - 1 receives per rank.
    for rank in p.ranks:
        kinds = [op["kind"] for op in rank["ops"]]
        assert kinds.count("compute") == 8
        assert kinds.count("send") == 7 and kinds.count("recv") == 7
    assert p.ops_by_kind["compute"] == 64


def test_input_error_names_file_line_key():
    with pytest.raises(tilesim.InputError) as e:
        tilesim.simulate(RING, overrides={"schedule.gpus": 3})
    assert e.value.file == RING
    assert e.value.line == 5
    assert e.value.key == "attention.seq_len"
    assert "not divisible" in e.value.expected


def test_set_error_names_the_override():
    with pytest.raises(tilesim.InputError) as e:
        tilesim.simulate(RING, overrides={"attention.seq_len": "12q"})
    assert e.value.key == "attention.seq_len"
    assert "--set attention.seq_len=12q" in e.value.file


def test_report_writes_html(tmp_path):
    out = tilesim.report(RING, str(tmp_path / "r.html"), gpus=[4, 8])
    text = open(out, encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>") and text.count('class="curve"') >= 2
