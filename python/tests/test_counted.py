"""Instruction mode (--inferbench-measure instructions): callgrind's files read, the identity, the
command line, and a round counted in a real process under callgrind when valgrind is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURE, pytest_in

from inferbench import _counted

CALLGRIND_FILE = """# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  python3 x.py
desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: Trigger: --dump-after=_CallPythonObject
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
fn=(1) f
1 5 1 1 0 0 0 0 0 0
summary: 1719335 491222 277185 211 225 44 22 1 2
totals: 1719335 491222 277185 211 225 44 22 1 2
"""


def test_read_counts_and_est_cycles(tmp_path: Path):
    p = tmp_path / "cg.1.1"
    p.write_text(CALLGRIND_FILE)
    ev = _counted.read_counts(p)
    assert ev["Ir"] == 1719335 and ev["DLmw"] == 2
    assert _counted.est_cycles(ev) == 1719335 + 10 * (211 + 225 + 44) + 100 * (22 + 1 + 2)
    (tmp_path / "bad").write_text("events: Ir\n")
    with pytest.raises(RuntimeError, match="not a callgrind file with totals"):
        _counted.read_counts(tmp_path / "bad")


def test_identity_and_command_line(tmp_path: Path):
    ident = _counted.identity()
    assert ident["python"].startswith(("CPython ", "PyPy ")) and ident["cache"] == " ".join(_counted.CACHE)
    argv = _counted.argv("/usr/bin/valgrind", tmp_path)
    assert "--collect-atstart=no" in argv and f"--toggle-collect={_counted.BOUNDARY}" in argv and f"--dump-after={_counted.BOUNDARY}" in argv
    assert argv[argv.index("--") + 1] == sys.executable
    env = _counted.environ(tmp_path, "3.19.0")
    assert env[_counted.ENV] == str(tmp_path) and env.get("PYTHONHASHSEED") in (os.environ.get("PYTHONHASHSEED"), "0")


def test_without_valgrind_a_usage_error(tmp_path: Path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    p = pytest_in(project, "--inferbench-measure", "instructions", env={"PATH": str(tmp_path)})  # no valgrind on PATH
    assert p.returncode == 4, p.stdout + p.stderr
    assert "needs valgrind" in p.stderr and "measure time" in p.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None or sys.platform == "win32", reason="valgrind is not installed (instruction mode needs it)")
def test_counter_counts_a_round_under_callgrind(tmp_path: Path):
    # A process under callgrind as the plugin starts one: each count is one round's, the same
    # code counts the same (within 0.5%, compare's count threshold), twice the work twice the count.
    script = tmp_path / "one.py"
    script.write_text(
        "import json, os\n"
        "from pathlib import Path\n"
        "from inferbench import _counted\n"
        "def work(n):\n"
        "    return sum(i * i for i in range(n))\n"
        "c = _counted.Counter(Path(os.environ[_counted.ENV]))\n"
        "work(2000)  # warm: the first calls of a code path count more\n"
        "a = [c.count(lambda: work(2000))['Ir'] for _ in range(4)][1:]  # the first count of a path is heavier\n"
        "b = c.count(lambda: work(4000))['Ir']\n"
        "print(json.dumps([a, b]))\n"
    )
    valgrind, version = _counted.find_valgrind()
    argv = _counted.argv(valgrind, tmp_path)
    argv = argv[: argv.index("--") + 1] + [sys.executable, str(script)]
    env = _counted.environ(tmp_path, version)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(_counted.__file__).parents[1]), env.get("PYTHONPATH", "")])
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    a, b = json.loads(p.stdout.strip().splitlines()[-1])
    assert min(a) > 0 and max(a) / min(a) < 1.005, a
    assert 1.8 < b / a[0] < 2.2, (a, b)



NEIGHBOURS = """
import gc, json, os, sys, types
from pathlib import Path
from inferbench import _counted
from inferbench._fixture import _settled, fresh_code

c = _counted.Counter(Path(os.environ[_counted.ENV]))
prepare = sys.argv[1] == "prepared"


def lib(o):  # shared library code, as a unit registry's: specialized by whoever called it before
    s = 0
    for _ in range(10):
        s += o.a + o.b + len(o.items)
    return s


class Mine:
    def __init__(self):
        self.a, self.b, self.items = 1, 2, [1, 2]


mine = Mine()


def target():
    return lib(mine) + sum(lib(mine) for _ in range(5))


def count():
    # As the plugin counts a test: its preparation, three warm-up calls, rounds from one state.
    if prepare:
        fresh_code()
    for _ in range(3):
        target()
    res = []
    for _ in range(3):
        if prepare:
            with _settled():
                res.append(c.count(lambda: [target() for _ in range(20)])["Ir"] / 20)
        else:
            res.append(c.count(lambda: [target() for _ in range(20)])["Ir"] / 20)
    return sorted(res)[1]


alone = count()
# The session's other tests: the same library with objects of 60 shapes of their own.
for n in range(60):
    o = type(f"K{n}", (), {})()
    if n % 2:
        o.x = 0
    o.a, o.b, o.items = n, n, (1,)
    for _ in range(30):
        lib(o)
print(json.dumps([alone, count()]))
"""


@pytest.mark.skipif(shutil.which("valgrind") is None or sys.platform == "win32", reason="valgrind is not installed (instruction mode needs it)")
@pytest.mark.skipif(sys.version_info < (3, 11), reason="no specializing interpreter before CPython 3.11")
def test_count_does_not_depend_on_neighbours(tmp_path: Path):
    # A test counted before and after other tests that call the same library code with their own
    # objects (issue 46: the same tests counted 2.7-3.5% lower in a 5-test session than in the
    # 17-test one). CPython specializes a code object for the types its callers passed: without
    # the plugin's preparation the count moves with the neighbours (+1.8% here), with it (each
    # test's code fresh, fresh_code; each round from one collector state, _settled) it stays
    # within 0.5%, compare's count threshold.
    script = tmp_path / "neighbours.py"
    script.write_text(NEIGHBOURS)
    valgrind, version = _counted.find_valgrind()
    argv = _counted.argv(valgrind, tmp_path)
    env = _counted.environ(tmp_path, version)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(_counted.__file__).parents[1]), env.get("PYTHONPATH", "")])
    got = {}
    for how in ("plain", "prepared"):
        p = subprocess.run([*argv[: argv.index("--") + 1], sys.executable, str(script), how], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        alone, after = json.loads(p.stdout.strip().splitlines()[-1])
        got[how] = after / alone - 1
    assert abs(got["plain"]) > 0.005, f"the neighbours did not move the unprepared count ({got['plain']:+.2%}): the test shows nothing"
    assert abs(got["prepared"]) < 0.005, f"prepared, the count moved {got['prepared']:+.2%} with its neighbours"
