#!/usr/bin/env bash
# The compiled kernels under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   tools/sanitize_kernels.sh [pytest arguments]
#
# Copies the working tree to a temporary folder, builds every kernel there with
# POLYTOK_SANITIZE=1 (-fsanitize=address,undefined, no recovery from UB), and runs the
# kernel tests, the hostile-input suites and the parity suites against that build with the
# sanitizer runtime preloaded (CPython itself is not instrumented; leak checks are off, as
# the interpreter keeps memory until exit). Any memory error or undefined behaviour aborts
# the run. Nothing in the working tree changes. Not part of CI: it takes several minutes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
outer="$(mktemp -d /tmp/polytok-sanitize.XXXXXX)"
trap 'rm -rf "$outer"' EXIT
work="$outer/polytok"
mkdir "$work"
# the tests read ../shared/fixtures beside the tree when it exists: give the copy the same neighbour
if [ -d "$root/../shared" ]; then
    ln -s "$(cd "$root/../shared" && pwd)" "$outer/shared"
fi
git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 cp --parents -t "$work")
cd "$work"
POLYTOK_SANITIZE=1 python tools/build_kernel.py --all
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if [ "$#" -eq 0 ]; then
    set -- tests/kernels tests/robustness tests/parity tests/formats/test_sentencepiece_parity.py \
        tests/formats/test_tiktoken_parity.py tests/formats/test_tekken_parity.py tests/formats/test_gguf_parity.py
fi
PYTHONPATH="$work/src" python -m pytest -q -p no:cacheprovider "$@"
