#!/usr/bin/env bash
# Fetches NVRTC (Debian trixie's non-free libnvrtc12, CUDA 12.4) into a
# folder, for `tilego emit --resources` on a machine without CUDA: the
# register, spill and stack report of a kernel without a GPU. Nothing is
# installed; the machine's apt sources stay as they are.
#
#   scripts/fetch-nvrtc.sh [DIR]        # default ~/.cache/tilego-nvrtc
#   export LD_LIBRARY_PATH=DIR          # as the script prints
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tilego-nvrtc}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial"
echo "deb http://deb.debian.org/debian trixie non-free" >"$tmp/trixie.list"
opts=(-o Dir::Etc::sourcelist="$tmp/trixie.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$tmp/lists"
	-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User="$(id -un)")
apt-get "${opts[@]}" update >/dev/null
(cd "$tmp" && apt-get "${opts[@]}" download libnvrtc12 libnvrtc-builtins12.4 >/dev/null)
for d in "$tmp"/*.deb; do
	dpkg -x "$d" "$tmp/x"
done
cp -a "$tmp"/x/usr/lib/x86_64-linux-gnu/libnvrtc* "$dir"/
echo "export LD_LIBRARY_PATH=$dir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
