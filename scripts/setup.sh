#!/usr/bin/env bash
# Installs every system package fathom needs on a fresh Debian 12 machine (run as root).
#   scripts/setup.sh          build dependencies (libclang for RocksDB's bindings), fio for
#                             `fathom calibrate`, and losetup, mount and mkfs.ext4 for a device
#                             profile's device of the run's own (`--device`)
#   scripts/setup.sh --servers  also the database servers fathom starts (MariaDB with MyRocks, PostgreSQL)
#   scripts/setup.sh --peers    also the peer tools used for side-by-side runs (db_bench, sysbench, GNU time)
#   scripts/setup.sh --dbbench  also what building db_bench against fathom's RocksDB needs (gflags, and
#                               the compression libraries' headers its sources include)
#   scripts/setup.sh --fetch    also what scripts/fetch-engine.sh needs (curl, unzip, xz, nm, patchelf, cc)
#   scripts/setup.sh --build-wiredtiger  also what building a WiredTiger release needs (CMake, autotools, snappy)
#   scripts/setup.sh --java     also a JDK and Maven, to build LinkBench's Java for bench/compare-linkbench.sh
#   scripts/setup.sh --profile  also Linux perf, for `fathom run --profile`
#   scripts/setup.sh --allocators  also tcmalloc and jemalloc, for a setup's `allocator`
#   scripts/setup.sh --slurm    also Slurm and munge, for scripts/slurm.sh's one-node cluster
#   scripts/setup.sh --container  also podman, runc and debootstrap, for scripts/container.sh
#   scripts/setup.sh --guest    also qemu, Debian's kernel and a static busybox, for
#                               scripts/cgroup2-guest.sh's guest with every cgroup on v2
#   scripts/setup.sh --test     also what the tests use: perf (the profile tests), the servers,
#                               sysbench (run on fathom's tables),
#                               python3 (scripts/check-recipes.sh follows the architecture doc's steps),
#                               chromium to render the HTML report, Slurm and munge (the job array
#                               tests start a one-node Slurm with scripts/slurm.sh), podman, runc and
#                               debootstrap (the container test: scripts/container.sh), the --guest
#                               packages (the cgroup v2 test), Debian's RocksDB release
#                               (librocksdb7.8) for the engine run through a library's C API, and
#                               FerretDB (the MongoDB-protocol server the mongodb engine's tests
#                               start), built once from the Go module proxy with the machine's
#                               Go 1.22+ (else Go 1.22.12, itself fetched from the proxy)
set -euo pipefail

packages=(libclang-dev clang libbpf-dev pkg-config build-essential libwiredtiger-dev fio util-linux mount e2fsprogs)
# iproute2: `--network namespace` makes veth pairs with `ip`.
servers=(mariadb-server mariadb-plugin-rocksdb postgresql iproute2)
slurm=(slurmctld slurmd slurm-client munge)
container=(podman runc debootstrap)
guest=(qemu-system-x86 linux-image-amd64 busybox-static)
for arg in "$@"; do
  case "$arg" in
    --servers) packages+=("${servers[@]}") ;;
    --peers) packages+=(rocksdb-tools sysbench time) ;;
    --dbbench) packages+=(libgflags-dev libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev) ;;
    --fetch) packages+=(curl unzip xz-utils binutils patchelf gcc) ;;
    --build-wiredtiger) packages+=(cmake autoconf automake libtool libsnappy-dev build-essential) ;;
    --java) packages+=(openjdk-17-jdk-headless maven) ;;
    --profile) packages+=(linux-perf) ;;
    --allocators) packages+=(libtcmalloc-minimal4 libjemalloc2) ;;
    --slurm) packages+=("${slurm[@]}") ;;
    --container) packages+=("${container[@]}") ;;
    --guest) packages+=("${guest[@]}") ;;
    --test) packages+=("${servers[@]}" sysbench chromium librocksdb7.8 python3 linux-perf libtcmalloc-minimal4 libjemalloc2 "${slurm[@]}" "${container[@]}" "${guest[@]}") ;;
    *) echo "setup.sh: unknown option $arg (expected --servers, --peers, --dbbench, --fetch, --build-wiredtiger, --java, --profile, --allocators, --slurm, --container, --guest or --test)" >&2; exit 2 ;;
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

# FerretDB for the mongodb engine's tests: built with Go (about 2 minutes, once; kept with the
# other fetched engines, Go's module and build caches under ~/go and ~/.cache).
for arg in "$@"; do
  if [[ $arg == --test ]]; then
    "$(dirname "$0")/fetch-engine.sh" ferretdb "${FATHOM_TEST_FERRETDB_VERSION:-1.24.0}" >/dev/null
  fi
done
