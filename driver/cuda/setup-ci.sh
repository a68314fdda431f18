#!/usr/bin/env bash
# setup-ci.sh installs what the CUDA tests need on a machine without a GPU:
#   - ptxas, extracted from Debian non-free's nvidia-cuda-toolkit .deb into
#     $KILN_CUDA_DEB (default /opt/cuda-deb), so every emitted kernel can be
#     assembled for sm_80 and sm_90;
#   - libcuda1 (Debian non-free), so the real loading path runs and cuInit
#     answers CUDA_ERROR_NO_DEVICE.
# Non-free is enabled through a private apt configuration under
# $KILN_APT_DIR (default /opt/kiln-apt); /etc/apt is never edited.
# Idempotent: a second run only checks. Needs root (as CI runs).
set -euo pipefail

APT_DIR=${KILN_APT_DIR:-/opt/kiln-apt}
DEB_DIR=${KILN_CUDA_DEB:-/opt/cuda-deb}
say() { printf 'setup-ci: %s\n' "$*"; }

# mirror finds the first URI in the system's apt sources that matches $1
# (a grep pattern), in deb822 or one-line format.
mirror() {
	local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list)
	local f uri
	for f in "${files[@]}"; do
		[ -f "$f" ] || continue
		uri=$(sed -n -e 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
			-e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$f" |
			grep -E "$1" | head -n1 || true)
		if [ -n "$uri" ]; then
			echo "$uri"
			return
		fi
	done
}

apt_config() {
	local main security keyring
	main=$(mirror '/debian/?$')
	security=$(mirror 'debian-security')
	main=${main:-http://deb.debian.org/debian}
	security=${security:-http://deb.debian.org/debian-security}
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	cat >"$APT_DIR/sources.list" <<EOF
deb [signed-by=$keyring] $main bookworm main contrib non-free
deb [signed-by=$keyring] $main bookworm-updates main contrib non-free
deb [signed-by=$keyring] $security bookworm-security main contrib non-free
EOF
	cat >"$APT_DIR/apt.conf" <<EOF
Dir::Etc::SourceList "$APT_DIR/sources.list";
Dir::Etc::SourceParts "$APT_DIR/sources.list.d";
Dir::State::Lists "$APT_DIR/lists";
Dir::Cache "$APT_DIR/cache";
EOF
	say "private apt config $APT_DIR/apt.conf (mirrors $main, $security)"
}

apt_update_once() {
	if [ -z "$(ls "$APT_DIR/lists" 2>/dev/null | grep -v -e partial -e lock)" ]; then
		say "apt-get update (private lists)"
		APT_CONFIG="$APT_DIR/apt.conf" apt-get update -q
	fi
}

# papt runs apt-get with the private configuration; if that fails (lists
# left by an earlier run may name packages the mirror has replaced), it
# refreshes the lists and tries once more.
papt() {
	if ! APT_CONFIG="$APT_DIR/apt.conf" DEBIAN_FRONTEND=noninteractive apt-get "$@"; then
		say "apt-get $1 failed; refreshing the private lists and retrying"
		APT_CONFIG="$APT_DIR/apt.conf" apt-get update -q
		APT_CONFIG="$APT_DIR/apt.conf" DEBIAN_FRONTEND=noninteractive apt-get "$@"
	fi
}

ptxas_ok() { "$DEB_DIR/usr/bin/ptxas" --version >/dev/null 2>&1; }

install_ptxas() {
	if ptxas_ok; then
		say "ptxas present: $("$DEB_DIR/usr/bin/ptxas" --version | tail -n1)"
		return
	fi
	apt_update_once
	local tmp
	tmp=$(mktemp -d)
	# apt-get download drops privileges to _apt, which must write there.
	chown _apt "$tmp" 2>/dev/null || chmod 755 "$tmp"
	say "downloading nvidia-cuda-toolkit .deb (about 84 MB)"
	(cd "$tmp" && papt download -q nvidia-cuda-toolkit)
	mkdir -p "$DEB_DIR"
	say "extracting into $DEB_DIR"
	dpkg -x "$tmp"/nvidia-cuda-toolkit_*.deb "$DEB_DIR"
	rm -rf "$tmp"
	if [ ! -x "$DEB_DIR/usr/bin/ptxas" ]; then
		# The binary may live under lib/nvidia-cuda-toolkit; expose it at the fixed path.
		local found
		found=$(find "$DEB_DIR" -type f -name ptxas | head -n1)
		[ -n "$found" ] || { say "no ptxas in the .deb"; exit 1; }
		mkdir -p "$DEB_DIR/usr/bin"
		ln -sf "$found" "$DEB_DIR/usr/bin/ptxas"
	fi
	if ! ptxas_ok; then
		say "ptxas does not run; ldd says:"
		ldd "$DEB_DIR/usr/bin/ptxas" || true
		exit 1
	fi
	say "ptxas ready: $("$DEB_DIR/usr/bin/ptxas" --version | tail -n1)"
}

install_libcuda() {
	if dpkg-query -W -f='${Status}' libcuda1 2>/dev/null | grep -q 'ok installed'; then
		say "libcuda1 installed: $(dpkg-query -W -f='${Version}' libcuda1)"
		return
	fi
	apt_update_once
	say "apt-get install libcuda1 (no recommends: no kernel module is built)"
	papt install -y -q --no-install-recommends libcuda1
	say "libcuda1 installed: $(dpkg-query -W -f='${Version}' libcuda1)"
}

apt_config
install_ptxas
install_libcuda
