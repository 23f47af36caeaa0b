"""Build hook of the pyinferbench wheels: puts the inferbench binary into a platform wheel.

With INFERBENCH_WHEEL_BINARY (the binary's path) and INFERBENCH_WHEEL_PLATFORM (GOOS/GOARCH, as
the Makefile's PLATFORMS spells it) the binary goes into the wheel's scripts, which pip installs
into the environment's bin (Scripts on Windows), and the wheel is tagged for that platform. Without
them the wheel is the pure-Python package (py3-none-any), which finds a binary on PATH.

The tag comes from the binary, not from the machine that builds it: the build cross-compiles.
The binary's header is checked against the platform asked for, so a wrong binary cannot ship
under another platform's tag, and macOS's tag carries the minimum version the Go linker wrote
into the binary (LC_BUILD_VERSION), the oldest macOS that runs it.
"""

from __future__ import annotations

import os
import struct

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


class CustomBuildHook(BuildHookInterface):
    """CustomBuildHook adds the binary and the platform tag to a wheel; see the module's comment."""

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        binary = os.environ.get("INFERBENCH_WHEEL_BINARY", "")
        platform = os.environ.get("INFERBENCH_WHEEL_PLATFORM", "")
        if not binary and not platform:
            return  # the pure-Python wheel
        if not binary or not platform:
            raise ValueError("INFERBENCH_WHEEL_BINARY and INFERBENCH_WHEEL_PLATFORM go together (or neither: a py3-none-any wheel)")
        with open(binary, "rb") as f:
            data = f.read()
        tag = platform_tag(platform, data, binary)
        exe = "inferbench.exe" if platform.startswith("windows/") else "inferbench"
        build_data["shared_scripts"][binary] = exe
        build_data["tag"] = f"py3-none-{tag}"
        build_data["pure_python"] = False
