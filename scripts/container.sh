#!/usr/bin/env bash
# fathom's container image with podman (Debian's, with runc), as root:
#   scripts/container.sh base    a Debian 12 base image made from Debian's mirror with
#                                debootstrap (no registry needed), imported as
#                                localhost/fathom-base:bookworm (kept: made once)
#   scripts/container.sh build   the image from the Containerfile on that base, fathom taken
#                                prebuilt from target/release (CARGO_TARGET_DIR's), tagged
#                                localhost/fathom:latest
#   scripts/container.sh run ARGS...  `fathom ARGS` in the image, results in ./results
# Where a registry is reachable, `podman build -t fathom .` builds everything from public
# images instead (docs/multi-host.md).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
shift || true
if [[ $(id -u) -ne 0 ]]; then
  echo "container.sh: run as root" >&2
  exit 1
fi
missing=()
for p in podman runc debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "container.sh: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# crun (podman's default) refuses this kind of VM's mixed cgroup setup; runc does not.
podman=(podman --runtime runc)
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
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
    tar -C "$root" -c . | "${podman[@]}" import - "$base" >/dev/null
    echo "container.sh: $base made from Debian's mirror" >&2
    ;;
  build)
    "$0" base
    bin=${CARGO_TARGET_DIR:-$HOME/.cache/fathom-target}/release/fathom
    [[ -x $bin ]] || { echo "container.sh: no $bin: build fathom first (cargo build --release)" >&2; exit 1; }
    context=$(mktemp -d /var/tmp/fathom-context.XXXXXX)
    trap 'rm -rf "$context"' EXIT
    mkdir -p "$context/target/release"
    cp -r Containerfile experiments setups "$context/"
    cp "$bin" "$context/target/release/fathom"
    "${podman[@]}" build --quiet --target prebuilt --build-arg BASE="$base" \
      --ulimit nofile=65536:65536 -t localhost/fathom:latest -f "$context/Containerfile" "$context"
    ;;
  run)
    mkdir -p results
    exec "${podman[@]}" run --rm --ulimit nofile=65536:65536 -v "$PWD/results:/results" \
      localhost/fathom:latest "$@"
    ;;
  *)
    echo "container.sh: expected base, build or run, got '$cmd'" >&2
    exit 2
    ;;
esac
