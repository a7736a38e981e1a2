"""The block exp of the core (csrc/fastexp.pxi) gives libm's exp bit for bit, and runs on
vector lanes where this build and this libm allow it (the split mixture's weights, and so
every search, depend on it giving the very same numbers)."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import platform
import random
import struct

import pytest

from csl_ai import _core

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
LIBM.exp.restype = ctypes.c_double
LIBM.exp.argtypes = [ctypes.c_double]


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def assert_libm(xs: list[float]) -> None:
    got = _core.exp_block(xs)
    bad = [(x, y, LIBM.exp(x)) for x, y in zip(xs, got, strict=True)
           if bits(y) != bits(LIBM.exp(x)) and not (math.isnan(y) and math.isnan(LIBM.exp(x)))]
    assert not bad, f"{len(bad)} of {len(xs)} differ from libm, e.g. {bad[:3]}"


def test_equal_to_libm_over_the_mixtures_range() -> None:
    rng = random.Random(2026)
    assert_libm([rng.uniform(-60.0, 0.0) for _ in range(200_000)])


def test_equal_to_libm_over_all_magnitudes() -> None:
    rng = random.Random(12)
    xs = [-rng.expovariate(0.01) for _ in range(50_000)]
    xs += [rng.uniform(-1.0, 1.0) * 10.0 ** rng.uniform(-20, 2.9) for _ in range(50_000)]
    assert_libm(xs)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 7, 8, 9])
def test_edges_and_specials_in_every_lane(n: int) -> None:
    """Range edges (|x| = 2^-54, 512, underflow), zeros, infinities and NaN, in every
    lane position and in the scalar tail."""
    specials = [0.0, -0.0, 2.0 ** -54, -(2.0 ** -54), 2.0 ** -55, math.nextafter(2.0 ** -54, 0.0),
                -511.99999999, -512.0, -512.00000001, -708.4, -745.13, -745.14, -800.0, 1e-300,
                5e-324, -math.inf, math.inf, math.nan, 1.0, 709.7, 710.0]
    for start in range(len(specials)):
        block = [specials[(start + i) % len(specials)] for i in range(n)]
        assert_libm(block)


def test_lanes_in_use_where_built_for_them() -> None:
    """On x86-64 glibc (2.28 on: exp from a table of 128 and a degree-5 polynomial) a build
    with AVX2 and FMA runs the lanes: the import check found them equal to libm."""
    if not _core.exp_lanes_built():
        pytest.skip("built without AVX2 and FMA (CSL_PORTABLE or another CPU)")
    libc, version = platform.libc_ver()
    if libc != "glibc" or tuple(int(p) for p in version.split(".")[:2]) < (2, 28):
        pytest.skip(f"libm is not glibc 2.28 or later ({libc} {version})")
    assert _core.exp_lanes_in_use()
