#!/bin/sh
# Lets arm64 binaries run directly on this amd64 machine, through
# qemu-aarch64-static and the kernel's binfmt_misc. `go test -exec` is
# enough for ordinary tests, but `go test -fuzz` and cmd/fuzz start copies
# of their own binary, and those copies must run too. Needs root; exits
# non-zero when binfmt_misc cannot be mounted or written.
set -eu
dir=/proc/sys/fs/binfmt_misc
[ -x /usr/bin/qemu-aarch64-static ] || { echo "binfmt-arm64: qemu-aarch64-static missing" >&2; exit 1; }
[ -e "$dir/register" ] || mount -t binfmt_misc binfmt_misc "$dir"
if [ ! -e "$dir/qemu-aarch64" ]; then
	# ELF64, little endian, e_machine 0xb7 (AArch64); F: qemu is opened
	# now, so it also works for processes in other mount namespaces.
	printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F' >"$dir/register"
fi
grep -q enabled "$dir/qemu-aarch64"
