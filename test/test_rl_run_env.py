"""robot-core run-env: listing, random / heuristic / keyboard (through a pty) policies, recording, bad input."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from robot_core.cli import main
from robot_core.rl.keyboard import parse_keys

REPO = Path(__file__).resolve().parent.parent


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["run-env", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_list(capsys):
    status, out, _ = run_cli(capsys, "-l")
    assert status == 0
    for name in ("robot_core/Reach-v0", "robot_core/CartPole-v0", "robot_core/PushingRobot-v0"):
        assert name in out


def test_heuristics_succeed_through_the_cli(capsys):
    status, out, _ = run_cli(capsys, "--env", "robot_core/CartPole-v0", "--policy", "heuristic", "--episodes", "2")
    assert status == 0 and out.count("500 steps, return 500.00, success True") == 2, out
    status, out, _ = run_cli(capsys, "--env", "robot_core/PushingRobot-v0", "--policy", "heuristic", "--episodes", "1")
    assert status == 0 and "success True" in out, out
    status, out, _ = run_cli(capsys, "--env", "robot_core/Reach-v0", "--policy", "heuristic", "--episodes", "1")
    assert status == 0 and "success True" in out, out


def test_random_policy_and_env_args(capsys):
    status, out, _ = run_cli(capsys, "--env", "robot_core/CartPole-v0", "-a", "observation='visual'", "--episodes", "2")
    assert status == 0 and "random policy on robot_core/CartPole-v0: 2 episodes" in out


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_record(capsys, tmp_path, suffix):
    path = tmp_path / f"episode{suffix}"
    status, out, _ = run_cli(capsys, "--env", "robot_core/CartPole-v0", "--episodes", "1", "--record", str(path))
    assert status == 0 and path.is_file(), out
    frames = int(re.search(r"recorded (\d+) frames", out).group(1))
    assert frames > 2
    head = path.read_bytes()[:12]
    assert head.startswith(b"GIF89a") if suffix == ".gif" else head[4:8] == b"ftyp"
    if suffix == ".mp4":  # decodes back to as many frames of the rendered size (padded to 16-pixel multiples)
        import imageio.v2 as imageio

        with imageio.get_reader(path) as reader:
            video = [frame for frame in reader.iter_data()]  # list(reader) trips over its len() of inf
        assert len(video) == frames and video[0].shape == (240, 320, 3)


@pytest.mark.parametrize(("argv", "message"), [
    (["--env", "robot_core/NoSuch-v0"], "unknown environment 'robot_core/NoSuch-v0'"),
    (["--env", "robot_core/CartPole-v0", "-a", "bogus=1"], "unexpected keyword argument 'bogus'"),
    (["--env", "robot_core/CartPole-v0", "--record", "out.avif"], "unknown video format"),
    (["--env", "robot_core/CartPole-v0", "--save", "x.zip"], "--save needs --train"),
    ([], "needs --env NAME"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    status, _, err = run_cli(capsys, *argv)
    assert status == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_parse_keys():
    assert parse_keys("ad\x1b[D\x1b[CQ\x1b") == ["a", "d", "a", "d", "q", "\x1b"]


def test_keyboard_needs_a_terminal():
    proc = subprocess.run([sys.executable, "-m", "robot_core.cli", "run-env", "--env", "robot_core/CartPole-v0",
                           "--policy", "keyboard"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 2 and "needs a terminal" in proc.stderr, proc.stderr


def play(argv: list[str], key: bytes, deadline: float = 90.0) -> tuple[int, str]:
    """Run run-env with the keyboard policy on a pty, pressing ``key`` every 20 ms until it exits."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "robot_core.cli", "run-env", "--policy", "keyboard", *argv],
                            stdin=slave, stdout=slave, stderr=slave, cwd=REPO, close_fds=True)
    os.close(slave)
    out = b""
    end = time.monotonic() + deadline
    try:
        while proc.poll() is None and time.monotonic() < end:
            if b"keys (minus/plus)" in out:
                os.write(master, key)
            if select.select([master], [], [], 0.02)[0]:
                try:
                    out += os.read(master, 4096)
                except OSError:
                    break
        proc.wait(timeout=max(1.0, end - time.monotonic()))
        while select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return proc.returncode, out.decode(errors="replace")


@pytest.mark.parametrize(("key", "sign"), [(b"d", 1.0), (b"\x1b[D", -1.0)])
def test_keyboard_drives_the_cart(key, sign):
    status, out = play(["--env", "robot_core/CartPole-v0", "--episodes", "1"], key)
    assert status == 0, out
    match = re.search(r"final observation \[\s*([-\d.e+]+)\s+([-\d.e+]+)\s+([-\d.e+]+)", out)
    assert match, out
    assert np.sign(float(match.group(3))) == sign, out  # the cart runs the way the key pushes it
    assert "success False" in out  # pushing one way only drops the pole


def test_keyboard_q_quits():
    status, out = play(["--env", "robot_core/PushingRobot-v0", "--episodes", "3"], b"q")
    assert status == 0 and "quit" in out and "episode 1:" not in out, out
