#!/usr/bin/env bash
# Runs a command as root in a guest whose cgroups are all on cgroup v2 (memory and io
# included), for trying fathom's cgroup v2 paths on a host whose controllers are on v1 and
# cannot be moved (this project's machines). The guest is Debian's own kernel under qemu
# (TCG: no KVM needed), booted from a busybox initramfs made here; it sees the host's root
# read-only over 9p, with tmpfs on /tmp, /root, /run and /var/tmp, the directory WORK
# read-write at the same path, and an empty disk of its own (/dev/vda, DISK_MB, ext4, mounted
# at WORK/disk) to throttle. Its console (the command's output) is printed; the script exits
# with the command's status.
#   scripts/cgroup2-guest.sh WORK 'cat /sys/fs/cgroup/cgroup.controllers'
#   CPUS=2 MEM_MB=4096 DISK_MB=2048 scripts/cgroup2-guest.sh WORK 'fathom calibrate ...'
# Installs what it needs (`scripts/setup.sh --guest`) when missing.
set -euo pipefail
work=${1:?usage: scripts/cgroup2-guest.sh WORK COMMAND}
command=${2:?usage: scripts/cgroup2-guest.sh WORK COMMAND}
cpus=${CPUS:-2}
mem=${MEM_MB:-4096}
disk_mb=${DISK_MB:-2048}

kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)
if ! command -v qemu-system-x86_64 >/dev/null || [[ -z $kernel ]] || [[ ! -x /bin/busybox ]]; then
  "$(dirname "$0")/setup.sh" --guest >/dev/null
  kernel=$(ls /boot/vmlinuz-* | sort -V | tail -1)
fi
release=${kernel#/boot/vmlinuz-}
mkdir -p "$work"
work=$(cd "$work" && pwd)

# The initramfs: busybox, the modules the host root and the disk need (in load order), and an
# init that mounts them and runs the command chrooted in the host's root.
ramfs=$(mktemp -d)
trap 'rm -rf "$ramfs"' EXIT
mkdir -p "$ramfs"/{bin,mods,dev,proc,sys,host}
cp /bin/busybox "$ramfs/bin/"
: >"$ramfs/mods/order"
for m in virtio_pci 9pnet_virtio 9p virtio_blk; do
  modprobe -S "$release" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r path; do
  cp "$path" "$ramfs/mods/"
  basename "$path" >>"$ramfs/mods/order"
done
cat >"$work/guest-command.sh" <<EOF
set -e
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
mount --bind "$work" /mnt
for d in /tmp /root /run /var/tmp; do mount -t tmpfs tmpfs "\$d"; done
# WORK again, where a tmpfs above hid it.
mkdir -p "$work" && mount --bind /mnt "$work"
modprobe ext4; modprobe loop; modprobe fuse 2>/dev/null || true
mkfs.ext4 -q -F /dev/vda
mkdir -p "$work/disk" && mount /dev/vda "$work/disk"
export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd "$work"
set +e
( $command )
echo "guest-status=\$?"
EOF
cat >"$ramfs/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in \$(cat /mods/order); do insmod /mods/\$m || echo "guest: cannot load \$m"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro host /host
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work /host$work
chroot /host /bin/bash "$work/guest-command.sh"
poweroff -f
EOF
chmod +x "$ramfs/init"
(cd "$ramfs" && find . | cpio -o -H newc 2>/dev/null | gzip >"$work/guest-initrd.gz")
truncate -s "${disk_mb}M" "$work/guest-disk.img"

qemu-system-x86_64 -accel tcg -m "$mem" -smp "$cpus" -nographic -no-reboot \
  -kernel "$kernel" -initrd "$work/guest-initrd.gz" \
  -append "console=ttyS0 quiet panic=-1 systemd.unified_cgroup_hierarchy=1" \
  -virtfs local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap \
  -virtfs local,path="$work",mount_tag=work,security_model=passthrough,multidevs=remap \
  -drive file="$work/guest-disk.img",if=virtio,format=raw,cache=none |
  tee "$work/guest-console.log" | grep -v -e '^\[' -e 'SeaBIOS' -e 'iPXE' -e 'Booting from' || true
status=$(sed -n 's/.*guest-status=\([0-9]*\).*/\1/p' "$work/guest-console.log" | tail -1)
[[ -n $status ]] || { echo "cgroup2-guest: the guest did not run the command (console in $work/guest-console.log)" >&2; exit 1; }
exit "$status"
