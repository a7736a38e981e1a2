"""Build the Cython cores (csrc/) into the extension modules csl_ai._core (Candy Spiders
Leopards) and csl_ai.candylab._core (Candy Lab).

CSL_DEBUG=1 turns bounds checks back on for a debug build. The core is compiled for the
building machine's CPU (-march=native: popcnt and BMI2 pdep matter in the hot loop),
without fused multiply-adds (-ffp-contract=off), so a seeded search gives the same answer
on machines with and without FMA; CSL_PORTABLE=1 builds a generic binary for a wheel that
must run elsewhere.
"""
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

debug = os.environ.get("CSL_DEBUG") == "1"

directives = {
    "language_level": 3,
    "boundscheck": debug,
    "wraparound": debug,
    "cdivision": not debug,
    "initializedcheck": debug,
}

if debug:
    compile_args = ["-O0", "-g"]
elif os.environ.get("CSL_PORTABLE") == "1":
    compile_args = ["-O3", "-fno-strict-aliasing", "-ffp-contract=off"]
else:
    compile_args = ["-O3", "-fno-strict-aliasing", "-ffp-contract=off", "-march=native"]

extensions = [
    Extension(
        "csl_ai._core",
        sources=["csrc/_core.pyx"],
        include_dirs=["csrc"],
        extra_compile_args=compile_args,
    ),
    Extension(
        "csl_ai.candylab._core",
        sources=["csrc/cl_core.pyx"],
        include_dirs=["csrc"],
        extra_compile_args=compile_args,
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["csrc"],
        compiler_directives=directives,
        build_dir=os.environ.get("CSL_BUILD_DIR", "build/cython"),
    ),
)
