#!/usr/bin/env bash
# Installs the system packages FetchLab builds against (Debian/Ubuntu), only
# when they are missing: OpenBLAS, LAPACKE, libcrypto (libssl-dev, for
# SHA-256), pkg-config, xz. Needs the Swift
# toolchain already on PATH (https://www.swift.org/install/).
set -euo pipefail
need=()
pkg-config --version >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists openblas 2>/dev/null || need+=(libopenblas-dev)
pkg-config --exists lapacke 2>/dev/null || need+=(liblapacke-dev)
pkg-config --exists libcrypto 2>/dev/null || need+=(libssl-dev)
command -v xz >/dev/null 2>&1 || need+=(xz-utils)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
fi
command -v swift >/dev/null 2>&1 || { echo "error: swift not found on PATH; install the Swift 6 toolchain first" >&2; exit 1; }
