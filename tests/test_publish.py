"""Publication is one atomic step: killed at any point, readers see one whole release.

A child process (a fork of the test's) publishes a new release and is SIGKILLed at its N-th
file-system mutation, for every N until it completes; after each kill the three published
paths must show the same release (all old or all new). Also: a second release into the same
output root stops at once naming the first.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result

from searchgen_nb.errors import ReleaseError
from searchgen_nb.publish import PUBLISHED, current_version, publish, release_lock


def _publish_killed_at(kill_at: int, out: Path, new: Path) -> int:
    """Publish ``new`` into ``out`` in a child process (a fork of this one) that SIGKILLs itself
    at its ``kill_at``-th file-system mutation (rename, replace, symlink, unlink, tree copy or
    removal). Returns the child's wait status; fails if it runs over 60 s."""
    pid = os.fork()
    if pid == 0:  # the child: count, kill, publish; never returns into pytest
        try:
            count = 0

            def counted(fn):
                def wrapper(*args, **kwargs):
                    nonlocal count
                    count += 1
                    if count == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return fn(*args, **kwargs)

                return wrapper

            for name in ("rename", "replace", "symlink", "unlink"):
                setattr(os, name, counted(getattr(os, name)))
            shutil.copytree = counted(shutil.copytree)
            shutil.rmtree = counted(shutil.rmtree)
            publish(out, {rel: new / rel for rel in PUBLISHED}, "v-new")
            os._exit(0)
        except BaseException:
            os._exit(3)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError(f"publish killed at step {kill_at} did not end within 60 s")
        time.sleep(0.002)


def _sources(base: Path, tag: str) -> Path:
    for rel in PUBLISHED:
        (base / rel).mkdir(parents=True)
        (base / rel / "ID").write_text(tag)
        (base / rel / f"only-{tag}.txt").write_text(tag)
    return base


def _as_sources(base: Path) -> dict[str, Path]:
    return {rel: base / rel for rel in PUBLISHED}


def _shown(out: Path) -> set[str]:
    """The release id each published path shows (a missing path shows 'none')."""
    return {
        (out / rel / "ID").read_text() if (out / rel / "ID").exists() else "none"
        for rel in PUBLISHED
    }


def _kill_every_step(tmp_path: Path, make_old) -> list[set[str]]:
    new = _sources(tmp_path / "new", "new")
    seen = []
    for n in range(1, 200):
        out = tmp_path / f"out{n}"
        make_old(out)
        before = _shown(out)
        status = _publish_killed_at(n, out, new)
        shown = _shown(out)
        assert len(shown) == 1, (n, shown)  # never a mix
        assert shown <= before | {"new"}, (n, shown)
        seen.append(shown)
        shutil.rmtree(out)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            assert shown == {"new"}  # completed
            return seen
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            n,
            status,
        )  # killed, not failed
    raise AssertionError("publish never completed")


def test_kill_at_every_step_of_publish_over_a_previous_release(tmp_path):
    def make_old(out):
        publish(out, _as_sources(_sources(out.parent / f"{out.name}-old", "old")), "v-old")

    seen = _kill_every_step(tmp_path, make_old)
    assert {"old"} in seen and seen[-1] == {"new"}
    assert len(seen) > 8  # every mutation point was tried


def test_first_publish_and_previous_is_kept(tmp_path):
    out = tmp_path / "out"
    publish(out, _as_sources(_sources(tmp_path / "a", "a")), "v1")
    publish(out, _as_sources(_sources(tmp_path / "b", "b")), "v2")
    publish(out, _as_sources(_sources(tmp_path / "c", "c")), "v3")
    assert _shown(out) == {"c"} and current_version(out) == "v3"
    assert os.readlink(out / ".releases" / "previous") == "v2"
    assert sorted(p.name for p in (out / ".releases").iterdir()) == [
        "current",
        "previous",
        "v2",
        "v3",
    ]
    assert (out / ".releases" / "previous" / "public" / "data" / "ID").read_text() == "b"
    for rel in PUBLISHED:
        assert (out / rel).is_symlink() and not os.path.isabs(os.readlink(out / rel))  # relocatable


def test_second_release_into_the_same_root_stops_naming_the_first(tmp_path):
    from searchgen_nb.book.release import run_release

    cfg = make_release(
        tmp_path / "src",
        [prompt("p1")],
        {"a": model("A")},
        {("a", "p1"): result({"checklist:0": 1})},
    )
    with release_lock(tmp_path / "site", "first.yml"):
        with pytest.raises(
            ReleaseError,
            match=rf"another release is running into {tmp_path / 'site'} \(pid {os.getpid()}, "
            rf"started .*, config first.yml\)",
        ):
            run_release(cfg, log=lambda m: None, output_root=tmp_path / "site")
    assert not (tmp_path / "site" / "build" / "release").exists()  # the work folder was not touched
