"""Compile one kernel (or all) in place, as ``pip install -e .`` does, without reinstalling.

    python tools/build_kernel.py bpe_merge          # src/polytok/_kernels/bpe_merge.c
    python tools/build_kernel.py --all
    POLYTOK_SANITIZE=1 python tools/build_kernel.py --all   # AddressSanitizer + UBSan build

Each kernel gets its own temporary build folder, so builds of different kernels can run
at the same time.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile

from setuptools import Distribution

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(names: list[str]) -> int:
    os.chdir(_ROOT)
    sys.path.insert(0, _ROOT)
    import setup as project_setup  # setup.py at the root: its extension list and build command

    extensions = {ext.name.rsplit(".", 1)[1]: ext for ext in project_setup._extensions()}
    failed = 0
    for name in names:
        if name not in extensions:
            print(f"no kernel {name!r}: expected src/polytok/_kernels/{name}.c", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix=f"polytok-build-{name}-") as temp:
            dist = Distribution({"name": "polytok", "ext_modules": [extensions[name]],
                                 "package_dir": {"": "src"}})
            cmd = project_setup.OptionalBuildExt(dist)
            cmd.inplace = True
            cmd.build_temp = temp
            cmd.ensure_finalized()
            cmd.run()
            found = glob.glob(os.path.join("src", "polytok", "_kernels", f"{name}.*.so"))
            if not found:
                failed += 1
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="kernel names (the .c files' stems)")
    parser.add_argument("--all", action="store_true", help="every kernel")
    args = parser.parse_args()
    names = args.names
    if args.all:
        names = sorted(os.path.splitext(os.path.basename(p))[0]
                       for p in glob.glob(os.path.join(_ROOT, "src", "polytok", "_kernels", "*.c")))
    if not names:
        parser.error("name a kernel, or --all")
    return build(names)


if __name__ == "__main__":
    sys.exit(main())
