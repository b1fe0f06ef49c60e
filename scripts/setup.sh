#!/usr/bin/env bash
# Installs every system package fathom needs on a fresh Debian 12 machine (run as root).
#   scripts/setup.sh          build dependencies (libclang for RocksDB's bindings)
#   scripts/setup.sh --peers  also the peer tools used for side-by-side runs (db_bench)
#   scripts/setup.sh --test   also what the tests use (chromium, to render the HTML report)
set -euo pipefail

packages=(libclang-dev clang pkg-config build-essential libwiredtiger-dev)
for arg in "$@"; do
  case "$arg" in
    --peers) packages+=(rocksdb-tools) ;;
    --test) packages+=(chromium) ;;
    *) echo "setup.sh: unknown option $arg (expected --peers or --test)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup.sh: needs root to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup.sh: cargo not found; install Rust (rustup) first" >&2
  exit 1
fi
