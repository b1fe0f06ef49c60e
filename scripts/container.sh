#!/usr/bin/env bash
# fathom's container image with podman (Debian's, with runc), as root:
#   scripts/container.sh base    a Debian 12 base image made from Debian's mirror with
#                                debootstrap (no registry needed), imported as
#                                localhost/fathom-base:bookworm (kept: made once)
#   scripts/container.sh build   the image from the Containerfile on that base, fathom taken
#                                prebuilt (FATHOM_BIN, else CARGO_TARGET_DIR's release/fathom),
#                                tagged localhost/fathom:latest
#   scripts/container.sh run ARGS...  `fathom ARGS` in the image, results in ./results
# Where a registry is reachable, `podman build -t fathom .` builds everything from public
# images instead (docs/multi-host.md).
set -euo pipefail
# `run` mounts the caller's ./results; the rest works from the repository.
here=$PWD
cd "$(dirname "$0")/.."
cmd=${1:-}
shift || true
if [[ $(id -u) -ne 0 ]]; then
  echo "container.sh: run as root" >&2
  exit 1
fi
scripts/setup.sh --container
# A machine where podman cannot run containers says so with status 3 (the container test then
# skips, by name).
# crun (podman's default) refuses this kind of VM's mixed cgroup setup; runc does not. The
# containers get this shell's open-file limit and its process limit capped at the kernel's
# pid_max: podman's defaults ask for more than such a VM lets its container runtime set.
podman=(podman --runtime runc)
nofile=$(ulimit -Hn) nproc=$(ulimit -Hu) pids=$(cat /proc/sys/kernel/pid_max)
((nproc <= pids)) || nproc=$pids
ulimits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
if ! "${podman[@]}" info >/dev/null 2>&1; then
  echo "container.sh: podman cannot run containers here: $("${podman[@]}" info 2>&1 | tail -1)" >&2
  exit 3
fi
base=localhost/fathom-base:bookworm
case "$cmd" in
  base)
    if "${podman[@]}" image exists "$base"; then
      exit 0
    fi
    root=$(mktemp -d /var/tmp/fathom-rootfs.XXXXXX)
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
    # The same mirrors the host's apt uses, and the security updates.
    if cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null; then
      rm -f "$root/etc/apt/sources.list"
    fi
    tar -C "$root" -c . | "${podman[@]}" import --quiet - "$base" >/dev/null
    echo "container.sh: $base made from Debian's mirror" >&2
    ;;
  build)
    "$0" base
    bin=${FATHOM_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}/release/fathom}
    [[ -x $bin ]] || { echo "container.sh: no $bin: build fathom first (cargo build --release)" >&2; exit 1; }
    context=$(mktemp -d /var/tmp/fathom-context.XXXXXX)
    trap 'rm -rf "$context"' EXIT
    mkdir -p "$context/target/release"
    cp -r Containerfile experiments setups "$context/"
    cp "$bin" "$context/target/release/fathom"
    "${podman[@]}" build --quiet --target prebuilt --build-arg BASE="$base" \
      "${ulimits[@]}" -t localhost/fathom:latest -f "$context/Containerfile" "$context"
    ;;
  run)
    mkdir -p "$here/results"
    exec "${podman[@]}" run --rm "${ulimits[@]}" -v "$here/results:/results" \
      localhost/fathom:latest "$@"
    ;;
  *)
    echo "container.sh: expected base, build or run, got '$cmd'" >&2
    exit 2
    ;;
esac
