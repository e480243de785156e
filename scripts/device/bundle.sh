#!/usr/bin/env bash
# scripts/device/bundle.sh: what a GPU host without Go needs to run
# provebench-cuda, in one compressed file: .device/bundle/provebench-cuda.tar.gz
# (about 20 MB against 60 MB loose), for hosts that receive the repository
# with a size limit (the lent H200 takes 64 MiB in all).
#
# It holds bin/provebench-cuda (stripped of its symbol table and debug
# information; the commit it was built from is still in it: --version),
# ICICLE's front end (.icicle/install/lib, built here by make icicle) and
# the CUDA backend libraries from $ICICLE_CUDA_DIR (default .device/icicle-cuda),
# in the layout the binary's rpath expects. On the GPU host, from the
# repository's root:
#
#   tar -xzf .device/bundle/provebench-cuda.tar.gz && eval "$(make -s cuda-env)"
#
# or, without make there: export ICICLE_BACKEND_INSTALL_DIR=$PWD/.device/icicle-cuda
# LD_LIBRARY_PATH=$PWD/.device/icicle-cuda:$PWD/.icicle/install/lib
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda_dir=${ICICLE_CUDA_DIR:-$PWD/.device/icicle-cuda}
ls "$cuda_dir"/libicicle_backend_cuda_*.so >/dev/null 2>&1 ||
	{ echo "scripts/device/bundle.sh: no CUDA backend libraries in $cuda_dir (set ICICLE_CUDA_DIR)" >&2; exit 2; }
git diff --quiet HEAD -- . ':!.device' 2>/dev/null ||
	echo "scripts/device/bundle.sh: warning: uncommitted changes: the binary records the commit as dirty" >&2

make --no-print-directory icicle >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/.icicle/install" "$stage/.device/icicle-cuda" .device/bundle
CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}" \
	CGO_LDFLAGS="-L$PWD/.icicle/install/lib -Wl,-rpath,\$ORIGIN/../.icicle/install/lib" \
	go build -buildvcs=auto -trimpath -ldflags='-s -w' -tags cuda -o "$stage/bin/provebench-cuda" ./cmd/provebench
cp -a .icicle/install/lib "$stage/.icicle/install/lib"
cp -a "$cuda_dir"/libicicle_backend_cuda_*.so "$stage/.device/icicle-cuda/"
tar -C "$stage" -czf .device/bundle/provebench-cuda.tar.gz .
"$stage/bin/provebench-cuda" --version
ls -la .device/bundle/provebench-cuda.tar.gz
