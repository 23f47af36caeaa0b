"""hatch_build.py's platform tags, from executables' headers (no binary is built here)."""

from __future__ import annotations

import importlib.util
import struct
import sys
import types
from pathlib import Path

import pytest


def load_hook():
    # The hook imports hatchling, which only the build venv has: a stand-in for its base class.
    for name in ("hatchling", "hatchling.builders", "hatchling.builders.hooks", "hatchling.builders.hooks.plugin"):
        sys.modules.setdefault(name, types.ModuleType(name))
    iface = types.ModuleType("hatchling.builders.hooks.plugin.interface")
    iface.BuildHookInterface = object  # type: ignore[attr-defined]
    sys.modules.setdefault("hatchling.builders.hooks.plugin.interface", iface)
    spec = importlib.util.spec_from_file_location("hatch_build", Path(__file__).parents[1] / "hatch_build.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


hook = load_hook()


def elf(machine: int) -> bytes:
    return b"\x7fELF" + bytes(14) + struct.pack("<H", machine) + bytes(40)


def macho(cputype: int, major: int, minor: int) -> bytes:
    seg = struct.pack("<II", 0x19, 72) + bytes(64)  # an LC_SEGMENT_64 before the version
    ver = struct.pack("<IIIIII", 0x32, 24, 1, (major << 16) | (minor << 8), 0, 0)
    return b"\xcf\xfa\xed\xfe" + struct.pack("<IIIIIII", cputype, 0, 2, 2, len(seg) + len(ver), 0, 0) + seg + ver


def pe(machine: int) -> bytes:
    return b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40) + b"PE\0\0" + struct.pack("<H", machine) + bytes(20)


@pytest.mark.parametrize(
    "platform,data,tag",
    [
        ("linux/amd64", elf(0x3E), "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"),
        ("linux/arm64", elf(0xB7), "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64"),
        ("darwin/amd64", macho(0x01000007, 12, 0), "macosx_12_0_x86_64"),
        ("darwin/arm64", macho(0x0100000C, 11, 0), "macosx_11_0_arm64"),
        ("darwin/arm64", macho(0x0100000C, 10, 15), "macosx_10_15_arm64"),  # before 11 the minor counts
        ("windows/amd64", pe(0x8664), "win_amd64"),
        ("windows/arm64", pe(0xAA64), "win_arm64"),
    ],
)
def test_platform_tag(platform, data, tag):
    assert hook.platform_tag(platform, data, "bin") == tag


@pytest.mark.parametrize(
    "platform,data,message",
    [
        ("linux/arm64", elf(0x3E), "a linux/amd64 binary, not linux/arm64"),  # wrong architecture
        ("darwin/arm64", pe(0xAA64), "a windows/arm64 binary, not darwin/arm64"),  # wrong OS
        ("linux/386", elf(0x03), "want GOOS/GOARCH with GOARCH amd64 or arm64"),
        ("linux/amd64", b"#!/bin/sh\n", "not an ELF, Mach-O or PE executable"),
        ("darwin/arm64", b"\xcf\xfa\xed\xfe" + struct.pack("<IIIIIII", 0x0100000C, 0, 2, 0, 0, 0, 0), "minimum macOS unknown"),
    ],
)
def test_platform_tag_refuses(platform, data, message):
    with pytest.raises(ValueError, match=message):
        hook.platform_tag(platform, data, "bin")


def load_version():
    spec = importlib.util.spec_from_file_location("pyinferbench_version", Path(__file__).parents[1] / "pyinferbench_version.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.mark.parametrize(
    "describe,want",
    [
        ("v1.2.3", "1.2.3"),  # a release tag
        ("v1.2.3-4-g2e32b9a", "0.0.dev0+g1.2.3.4.g2e32b9a"),  # after a tag
        ("2e32b9a-dirty", "0.0.dev0+g2e32b9a.dirty"),  # no tag, changes
        ("", "0.0.dev0"),
    ],
)
def test_version_from_git_describe(describe, want):
    assert load_version().pep440(describe) == want


def test_version_without_env_or_git(tmp_path, monkeypatch):
    # Before: `pip install python/` failed, "environment variable INFERBENCH_PY_VERSION is not set".
    v = load_version()
    monkeypatch.delenv("INFERBENCH_PY_VERSION", raising=False)
    assert v.version()  # from git here, or the fallback
    monkeypatch.setattr(v, "_from_git", lambda here: "")
    monkeypatch.setattr(v, "_from_pkg_info", lambda here: "")
    assert v.version() == "0.0.dev0"
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.5\nName: pyinferbench\nVersion: 1.4.0\n")
    assert load_version()._from_pkg_info(tmp_path) == "1.4.0"  # an sdist's version
    monkeypatch.setenv("INFERBENCH_PY_VERSION", "2.0.0")
    assert v.version() == "2.0.0"


def test_module_root_and_missing_go(tmp_path, monkeypatch):
    root = Path(__file__).parents[2]
    assert hook.module_root(root / "python") == root  # pip install python/
    assert hook.module_root(root) == root  # pip install .
    with pytest.raises(ValueError, match="no inferbench Go source here or above"):
        hook.module_root(tmp_path)
    monkeypatch.setenv("GO", str(tmp_path / "nogo"))
    monkeypatch.setattr(hook.shutil, "which", lambda name: None)  # no go on PATH
    monkeypatch.setattr(hook.Path, "is_file", lambda self: False)  # nor in /usr/local/go
    with pytest.raises(ValueError, match="needs Go, and none was found: Go 1.26 or later builds it"):
        hook.find_go()


def test_root_and_python_projects_agree():
    # pip install . (the root's pyproject.toml, and the sdist) and pip install python/ are one project.
    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).parents[2]
    a = tomllib.loads((root / "pyproject.toml").read_text())
    b = tomllib.loads((root / "python" / "pyproject.toml").read_text())
    pa, pb = dict(a["project"]), dict(b["project"])
    assert pa.pop("readme") == "python/README.md" and pb.pop("readme") == "README.md"
    assert pa == pb
    assert a["build-system"] == b["build-system"]
    assert pa["license"] == "Apache-2.0" and pa["urls"]["Source"] and pa["authors"]
    assert (root / "LICENSE").read_text().split()[:3] == ["Apache", "License", "Version"]


def test_sdist_includes_what_go_builds():
    # The sdist must hold every file `go build ./cmd/inferbench` reads (Go, assembly, embedded
    # files) for every platform: an assembly file missing from it broke the build from the sdist.
    import fnmatch
    import shutil
    import subprocess

    tomllib = pytest.importorskip("tomllib")
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").is_file() else None)
    if go is None:
        pytest.skip("Go is not installed")
    root = Path(__file__).parents[2]
    sd = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["sdist"]
    fmt = '{{if .Module}}{{if eq .Module.Path "github.com/inferbench/inferbench"}}{{range .GoFiles}}{{$.Dir}}/{{.}}\n{{end}}{{range .SFiles}}{{$.Dir}}/{{.}}\n{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}\n{{end}}{{end}}{{end}}'
    files: set[str] = set()
    for plat in ("linux/amd64", "darwin/arm64", "windows/amd64"):
        env = dict(__import__("os").environ, CGO_ENABLED="0", GOOS=plat.split("/")[0], GOARCH=plat.split("/")[1])
        out = subprocess.run([go, "list", "-deps", "-f", fmt, "./cmd/inferbench"], cwd=root, env=env, capture_output=True, text=True, check=True).stdout
        files |= {str(Path(f).relative_to(root)) for f in out.split()}

    def included(rel: str) -> bool:
        def match(pat: str) -> bool:
            pat = pat.lstrip("/")
            if pat.startswith("**/") and fnmatch.fnmatch(rel, pat[3:]):  # gitignore's **/: no folder too
                return True
            return fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat + "/*") or rel.startswith(pat.rstrip("/") + "/")

        return any(match(p) for p in sd["include"]) and not any(fnmatch.fnmatch(Path(rel).name, p) or f"/{p.strip('/')}/" in f"/{rel}" for p in sd["exclude"])

    missing = sorted(f for f in files if not included(f))
    assert not missing, missing
