#!/usr/bin/env bash
# Build SVM-Light V6.02's svm_learn (the solver Elsas et al. 2008 timed in Table 5) from the C
# source that PyPI's svmlight 0.4 source distribution carries (T. Joachims' lib/ files), checked
# against its sha256; prints the binary's path.  SVM-Light is free for scientific use and not
# redistributed by this project: the source is fetched at build time, into DEST (default
# .svmlight/, ignored by git).
#
#     RANKREPRO_SVM_LEARN=$(bash scripts/build_svmlight.sh) python scripts/svmlight_table5.py
set -euo pipefail
DEST=${1:-.svmlight}
SHA=3b6244050c9ee1f97ae8b305030851c757d98870ee7b3a1b9c9ea5e725d27541
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
mkdir -p "$DEST"
if [ ! -x "$DEST/svm_learn" ]; then
  [ -f "$DEST/svmlight-0.4.tar.gz" ] || "$PY" -m pip download --quiet svmlight==0.4 --no-binary :all: --no-deps -d "$DEST" >&2
  echo "$SHA  $DEST/svmlight-0.4.tar.gz" | sha256sum -c --quiet - >&2 \
    || { echo "build_svmlight.sh: $DEST/svmlight-0.4.tar.gz does not match its sha256; moved to $DEST/rejected/" >&2
         mkdir -p "$DEST/rejected"; mv "$DEST/svmlight-0.4.tar.gz" "$DEST/rejected/"; exit 1; }
  tar -xzf "$DEST/svmlight-0.4.tar.gz" -C "$DEST"
  src="$DEST/svmlight-0.4/lib"
  grep -q 'VERSION       "V6.02"' "$src/svm_common.h" || { echo "build_svmlight.sh: not SVM-Light V6.02" >&2; exit 1; }
  ${CC:-cc} -O3 -w -o "$DEST/svm_learn" "$src/svm_learn_main.c" "$src/svm_learn.c" "$src/svm_common.c" \
    "$src/svm_hideo.c" -lm >&2
fi
realpath "$DEST/svm_learn"
