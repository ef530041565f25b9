"""Worker processes. The result files are read on a worker per core (data contract, § The ten
components, Overall-9 and Overall-10): what is extracted does not depend on how many workers
read it or in which blocks (a worker that dies: ``test_extractors.py``). The gate's evidence
check runs in a process beside the other checks: its result or exception reaches the gate, and
the process never outlives the block."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from factory import make_release, model, prompt, result

from searchgen_nb import records, workers
from searchgen_nb.config import load_config
from searchgen_nb.errors import ReleaseError
from searchgen_nb.gate import evidence as gate_evidence
from searchgen_nb.gate.checks import validate_folder
from searchgen_nb.pipeline import run_data
from searchgen_nb.prompts import read_prompts


def _extracted(cfg) -> dict:
    ex = records.extract_records(cfg, read_prompts(cfg.dataset_path), progress=False)
    t = ex.table
    keys = [(k, i) for k in range(t.n_models) for i in range(t.n_prompts)]
    return {
        "status": t.status.tolist(),
        "values": np.nan_to_num(t.values, nan=-1.0).tolist(),
        "errors": dict(t.errors),
        "warnings": ex.warnings,
        "input_sha256": ex.input_sha256,
        "n_files_read": ex.n_files_read,
        "images": ex.images,
        "evidence": [ex.evidence.get(key) for key in keys],
    }


@pytest.mark.slow
def test_extraction_does_not_depend_on_the_workers(demo_tree, monkeypatch):
    cfg = load_config(demo_tree.path / "release.yml")
    monkeypatch.setattr(workers, "n_workers", lambda n: 1)
    one = _extracted(cfg)
    monkeypatch.setattr(workers, "n_workers", lambda n: min(n, 3))
    monkeypatch.setattr(records, "BLOCK", 97)  # blocks that end inside a model's prompts
    many = _extracted(cfg)
    assert one == many
    # the demo holds every kind of pair, so the comparison covers each
    assert {s for row in one["status"] for s in row} == {0, 1, 2, 3}
    assert one["errors"] and one["images"]
    assert sum(e is not None for e in one["evidence"]) > 5000


def _sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    if isinstance(value, Exception):
        raise value
    return value


def test_beside_gives_the_result_or_the_exception_of_its_task():
    with workers.beside(_sleep_then, (0.0, {"n": 1}), "lost") as result:
        assert result() == {"n": 1}
    with workers.beside(_sleep_then, (0.0, KeyError("k")), "lost") as result:
        with pytest.raises(KeyError, match="k"):
            result()


def test_beside_stops_its_process_when_the_block_fails():
    started = time.perf_counter()
    with pytest.raises(RuntimeError, match="the block failed"):
        with workers.beside(_sleep_then, (60.0, None), "lost"):
            raise RuntimeError("the block failed")
    assert time.perf_counter() - started < 10  # not the task's minute
    assert multiprocessing.active_children() == []


def test_beside_names_a_process_that_died():
    with workers.beside(_die, (), "validate: the check ended (killed?)") as result:
        with pytest.raises(ReleaseError) as err:
            result()
    assert str(err.value) == "validate: the check ended (killed?)"


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.parametrize("how", ["beside", "on_workers"])
def test_a_process_dies_with_the_command_even_a_killed_one(tmp_path, how):
    """SIGKILL gives the command no chance to stop its processes: each dies with it."""
    pid_file = tmp_path / "pid"
    script = f"""
import os, time
from searchgen_nb import workers
def task(_):
    open({str(pid_file)!r}, "w").write(str(os.getpid()))
    time.sleep(120)
if {how!r} == "beside":
    with workers.beside(task, (None,), "lost") as result:
        result()
else:
    with workers.on_workers(task, [None], "lost") as done:
        list(done)
"""
    command = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not pid_file.is_file() or not pid_file.read_text():
            assert time.monotonic() < deadline and command.poll() is None
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        assert not _gone(worker)
    finally:
        command.kill()
        command.wait()
    deadline = time.monotonic() + 10
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _gone(worker):
        os.kill(worker, signal.SIGKILL)
        pytest.fail(f"process {worker} outlived the killed command")


def test_the_gate_reports_as_if_the_evidence_check_ran_first(tmp_path, monkeypatch):
    """When the evidence check, in its own process, stops on an artifact it cannot read, the
    report is the one of a gate that ran it right after reading the records: what it found
    before it stopped is kept, the checks the gate ran meanwhile are dropped."""
    cfg = make_release(
        tmp_path,
        [prompt("p1"), prompt("p2")],
        {"m": model("M")},
        {("m", "p1"): result({"checklist:0": 1.0}), ("m", "p2"): result({"checklist:0": 2.0})},
    )
    out = run_data(load_config(cfg), tmp_path / "out", progress=False).out_dir
    alone = validate_folder(out)  # standalone: order_invariance skipped, no aggregation at hand
    assert alone.passed and alone.checks["order_invariance"]["skipped"]

    def unreadable(folder, manifest, cols, report):
        report.fail("evidence", "found before it stopped")
        raise KeyError("planted")

    monkeypatch.setattr(gate_evidence, "check_evidence", unreadable)
    report = validate_folder(out)
    assert report.checks["strict_json"]["failures"] == [
        {"message": "artifacts do not follow the schema: KeyError: 'planted'"}
    ]
    assert report.checks["order_invariance"]["skipped"] is None
    assert [c for c, e in report.checks.items() if not e["passed"]] == ["strict_json", "evidence"]
    assert report.checks["evidence"]["failures"] == [{"message": "found before it stopped"}]


class _Unbuildable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


def test_beside_names_an_exception_that_cannot_be_sent_back():
    with workers.beside(_sleep_then, (0.0, _Unbuildable(1, 2)), "lost") as result:
        with pytest.raises(ReleaseError) as err:
            result()
    assert str(err.value) == "a process beside the command failed: _Unbuildable: 1 and 2"


def test_beside_raises_the_error_of_a_fork_that_failed(monkeypatch):
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(BlockingIOError, match="Resource temporarily unavailable"):
        with workers.beside(_sleep_then, (0.0, None), "lost"):
            pass


def test_on_workers_stops_a_task_that_never_ends_when_the_block_fails():
    """Ctrl-C while an extractor hangs: the command stops at once, its workers with it."""
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with workers.on_workers(time.sleep, [60.0, 60.0, 60.0], "lost"):
            time.sleep(0.5)  # the workers have their tasks in hand
            raise KeyboardInterrupt
    assert time.perf_counter() - started < 10  # not the tasks' minute
    assert multiprocessing.active_children() == []
