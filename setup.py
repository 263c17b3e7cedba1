"""Builds polytok's compiled kernels (C, through the CPython API) when a C compiler is present.

Every ``src/polytok/_kernels/<name>.c`` is one extension module, ``polytok._kernels.<name>``.
A kernel that does not compile is left out with one line saying so: polytok then runs that
stage in pure Python (`polytok.kernels` says which path is active). ``POLYTOK_PURE_BUILD=1``
builds none; ``POLYTOK_SANITIZE=1`` builds them with AddressSanitizer and
UndefinedBehaviorSanitizer (``tools/sanitize_kernels.sh``).
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = sorted(glob.glob(os.path.join("src", "polytok", "_kernels", "*.c")))


def _extensions() -> list[Extension]:
    if os.environ.get("POLYTOK_PURE_BUILD") == "1":
        return []
    compile_args = ["-O3", "-std=c11", "-fno-strict-aliasing", "-Wall", "-Wextra", "-Wno-unused-parameter",
                    "-Wno-missing-field-initializers"]
    link_args: list[str] = []
    if os.environ.get("POLYTOK_SANITIZE") == "1":
        flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", "-g",
                 "-O1"]
        compile_args += flags
        link_args += flags
    headers = sorted(glob.glob(os.path.join("src", "polytok", "_kernels", "*.h")))
    return [Extension(f"polytok._kernels.{os.path.splitext(os.path.basename(src))[0]}", [src],
                      include_dirs=[os.path.join("src", "polytok", "_kernels")], depends=headers,
                      extra_compile_args=compile_args, extra_link_args=link_args)
            for src in _SOURCES]


class OptionalBuildExt(build_ext):
    """Builds each kernel it can; one that fails (no compiler, no Python headers) is skipped, saying so."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler at all: distutils' platform errors
            self._skipped("all kernels", exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # a compile or link error: this kernel stays pure Python
            self._skipped(ext.name, exc)

    @staticmethod
    def _skipped(what: str, exc: BaseException) -> None:
        print(f"polytok: {what} not compiled ({type(exc).__name__}: {exc}); the pure-Python path will run",
              file=sys.stderr)


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; tools/build_kernel.py imports it
    setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
