"""Build hook of the pyinferbench wheels: puts the inferbench binary into a platform wheel.

With INFERBENCH_WHEEL_BINARY (the binary's path) and INFERBENCH_WHEEL_PLATFORM (GOOS/GOARCH, as
the Makefile's PLATFORMS spells it) the binary goes into the wheel's scripts, which pip installs
into the environment's bin (Scripts on Windows), and the wheel is tagged for that platform. Without
them, see below.

With neither, the wheel is built from source: the binary is compiled with Go (CGO_ENABLED=0, as
make release builds it) from the Go module this package sits in (the checkout for `pip install
python/` or `pip install .`, the sdist's copy of the source otherwise) for the machine that builds
it. INFERBENCH_WHEEL_PURE=1 builds the pure-Python wheel (py3-none-any) instead, which finds a
binary on PATH.

The tag comes from the binary, not from the machine that builds it: the build cross-compiles.
The binary's header is checked against the platform asked for, so a wrong binary cannot ship
under another platform's tag, and macOS's tag carries the minimum version the Go linker wrote
into the binary (LC_BUILD_VERSION), the oldest macOS that runs it.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# Binaries built with CGO_ENABLED=0 are static and need no C library: on Linux they run under
# glibc (manylinux, PEP 600: any glibc >= 2.17 here) and musl (PEP 656) alike.
LINUX_TAGS = "manylinux_2_17_{a}.manylinux2014_{a}.musllinux_1_1_{a}"
# Architecture names: (ELF e_machine, Mach-O cputype, PE machine, wheel tag's name).
ARCH = {
    "amd64": (0x3E, 0x01000007, 0x8664, "x86_64"),
    "arm64": (0xB7, 0x0100000C, 0xAA64, "aarch64"),
}


def header_arch(data: bytes, path: str) -> tuple[str, str]:
    """header_arch returns (os, arch) of the executable whose first bytes are data."""
    if data[:4] == b"\x7fELF":
        (machine,) = struct.unpack_from("<H", data, 18)
        return "linux", arch_of(0, machine, path)
    if data[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit little-endian Mach-O
        (cputype,) = struct.unpack_from("<I", data, 4)
        return "darwin", arch_of(1, cputype, path)
    if data[:2] == b"MZ":
        (pe,) = struct.unpack_from("<I", data, 0x3C)
        if data[pe : pe + 4] != b"PE\0\0":
            raise ValueError(f"{path}: MZ header without a PE header")
        (machine,) = struct.unpack_from("<H", data, pe + 4)
        return "windows", arch_of(2, machine, path)
    raise ValueError(f"{path}: not an ELF, Mach-O or PE executable")


def arch_of(field: int, value: int, path: str) -> str:
    for name, ids in ARCH.items():
        if ids[field] == value:
            return name
    raise ValueError(f"{path}: unknown machine type {value:#x}")


def macos_min(data: bytes, path: str) -> tuple[int, int]:
    """macos_min returns the minimum macOS (major, minor) of a Mach-O binary's LC_BUILD_VERSION."""
    ncmds, _ = struct.unpack_from("<II", data, 16)
    off = 32  # mach_header_64
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos (xxxx.yy.zz), sdk
            (minos,) = struct.unpack_from("<I", data, off + 12)
            return minos >> 16, (minos >> 8) & 0xFF
        if cmd == 0x24:  # LC_VERSION_MIN_MACOSX: version, sdk
            (version,) = struct.unpack_from("<I", data, off + 8)
            return version >> 16, (version >> 8) & 0xFF
        off += size
    raise ValueError(f"{path}: no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX: minimum macOS unknown")


def platform_tag(platform: str, data: bytes, path: str) -> str:
    """platform_tag returns the wheel platform tag of the binary data built for platform (GOOS/GOARCH)."""
    goos, _, goarch = platform.partition("/")
    if goarch not in ARCH:
        raise ValueError(f"INFERBENCH_WHEEL_PLATFORM={platform!r}: want GOOS/GOARCH with GOARCH amd64 or arm64")
    got = header_arch(data, path)
    if got != (goos, goarch):
        raise ValueError(f"{path}: a {got[0]}/{got[1]} binary, not {platform} as INFERBENCH_WHEEL_PLATFORM says")
    if goos == "linux":
        return LINUX_TAGS.format(a=ARCH[goarch][3])
    if goos == "darwin":
        major, minor = macos_min(data, path)
        # Since macOS 11 the tag's minor version is 0 (pip matches 11_0 for every 11.x).
        return f"macosx_{major}_{0 if major >= 11 else minor}_{'x86_64' if goarch == 'amd64' else 'arm64'}"
    return f"win_{goarch}"


MODULE = "module github.com/inferbench/inferbench"
GO_HINT = ("Go 1.26 or later builds it (https://go.dev/dl; $GO names the go command), or install a platform wheel "
           "of pyinferbench; INFERBENCH_WHEEL_PURE=1 builds the package without the binary (it then runs the inferbench on PATH)")


def module_root(start: Path) -> Path:
    """module_root returns the folder of inferbench's go.mod: start or one of its two parents."""
    for d in (start, *start.parents[:2]):
        gomod = d / "go.mod"
        if gomod.is_file() and MODULE in gomod.read_text(encoding="utf-8").splitlines()[0]:
            return d
    raise ValueError(f"{start}: no inferbench Go source here or above (go.mod of {MODULE.split()[1]}): "
                     "build the wheel from a checkout or from the sdist that make wheels builds at the repository's root")


def find_go() -> str:
    for cand in (os.environ.get("GO", ""), shutil.which("go") or "", "/usr/local/go/bin/go"):
        if cand and (shutil.which(cand) or Path(cand).is_file()):
            return cand
    raise ValueError(f"building the inferbench binary from source needs Go, and none was found: {GO_HINT}")


def build_from_source(root: Path, out_dir: Path, version: str) -> tuple[str, str]:
    """build_from_source compiles the inferbench binary of module root into out_dir for this
    machine and returns (its path, GOOS/GOARCH)."""
    go = find_go()
    env = dict(os.environ, CGO_ENABLED="0")
    goos, goarch = (subprocess.run([go, "env", k], capture_output=True, text=True, check=True, env=env).stdout.strip() for k in ("GOOS", "GOARCH"))
    exe = out_dir / ("inferbench.exe" if goos == "windows" else "inferbench")
    ldflags = f"-s -w -X github.com/inferbench/inferbench/internal/cli.Version={version}"
    p = subprocess.run([go, "build", "-trimpath", "-ldflags", ldflags, "-o", str(exe), "./cmd/inferbench"], cwd=root, env=env,
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise ValueError(f"go build ./cmd/inferbench in {root} failed (exit {p.returncode}):\n{p.stderr.strip()}\n{GO_HINT}")
    return str(exe), f"{goos}/{goarch}"


class CustomBuildHook(BuildHookInterface):
    """CustomBuildHook adds the binary and the platform tag to a wheel; see the module's comment."""

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        binary = os.environ.get("INFERBENCH_WHEEL_BINARY", "")
        platform = os.environ.get("INFERBENCH_WHEEL_PLATFORM", "")
        if os.environ.get("INFERBENCH_WHEEL_PURE") and not binary and not platform:
            return  # the pure-Python wheel
        if bool(binary) != bool(platform):
            raise ValueError("INFERBENCH_WHEEL_BINARY and INFERBENCH_WHEEL_PLATFORM go together (or neither: the binary is built from source)")
        if not binary:
            self._tmp = tempfile.mkdtemp(prefix="inferbench-wheel-")
            binary, platform = build_from_source(module_root(Path(self.root)), Path(self._tmp), self.metadata.version)
        with open(binary, "rb") as f:
            data = f.read()
        tag = platform_tag(platform, data, binary)
        exe = "inferbench.exe" if platform.startswith("windows/") else "inferbench"
        build_data["shared_scripts"][binary] = exe
        build_data["tag"] = f"py3-none-{tag}"
        build_data["pure_python"] = False

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if getattr(self, "_tmp", None):
            shutil.rmtree(self._tmp, ignore_errors=True)
