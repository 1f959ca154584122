#!/usr/bin/env bash
# make fresh-check: the README's quick start where nothing was installed by hand.
#
# Builds a minimal Debian root from Debian's packages (debootstrap --variant=minbase, the host's
# release and the host's own apt sources), adds only what the README takes as given (make, to run
# the two commands), carries the host's Rust toolchain in (the README's one precondition: rustup's
# ~/.rustup read-only and the ~/.cargo/bin proxies), copies the repository in (what git tracks plus
# what it does not ignore: what a clone gets), and runs `make demo` then `make test` inside it as
# root with a clean environment. Anything the project forgot to install fails here.
#
# Needs root (debootstrap, chroot, mounts) and the package registries. Leaves build/fresh/ behind
# (the root and the logs) for a look after a failure; FRESH_KEEP=0 removes the root on success.
#   FRESH_DIR     where the root goes (default build/fresh)
#   FRESH_SUITE   Debian release (default: the host's VERSION_CODENAME)
#   FRESH_STEPS   what runs inside (default "make demo && make test && make spack-check")
#   FRESH_SEED    Debian packages put in the root first: what this project's machine image ships that
#                 could fool an "is it installed" test (LLVM's libclang-cpp without libclang, python3
#                 without venv). Default "llvm-14 libclang-cpp14 python3"; those the release lacks are
#                 skipped; FRESH_SEED= (empty) gives the bare root.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${FRESH_DIR:-$repo/build/fresh}
root=$work/root
steps=${FRESH_STEPS:-make demo && make test && make spack-check}
seed=${FRESH_SEED-llvm-14 libclang-cpp14 python3}
say() { echo "fresh-check: $*"; }
die() { echo "fresh-check: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts); run it as root or with sudo"
command -v apt-get >/dev/null || die "needs a Debian host (apt-get) to build a Debian root"
suite=${FRESH_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
[ -n "$suite" ] || die "cannot tell the host's Debian release: set FRESH_SUITE"
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin
[ -x "$cargo_bin/cargo" ] && [ -d "$rustup_home/toolchains" ] ||
  die "no rustup toolchain at $rustup_home with proxies in $cargo_bin (the README's precondition)"

# The host's Debian mirror, as apt is set up here (deb822 sources first, then sources.list).
mirror=${FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    mirror=$(awk -v s="$suite" '
      /^[[:space:]]*$/ { if (uri != "" && ok) { print uri; exit } uri = ""; ok = 0; next }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) ok = 1 }
      END { if (uri != "" && ok) print uri }' "$f" | head -n 1)
    [ -n "$mirror" ] && break
  done
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk -v s="$suite" '$1 == "deb" && $3 == s { print $2; exit }' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || die "cannot find the host's Debian mirror for $suite in /etc/apt: set FRESH_MIRROR"

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap (host side, to build the root)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { # bind SRC DST [ro]
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounts+=("$2")
  # nothing mounted below it (dev/shm, dev/pts) may propagate back to the host's tree
  mount --make-rprivate "$2" 2>/dev/null || true
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}

start=$(date +%s)
# A root from an earlier run may still have mounts (a killed run): undo them before removing it.
if [ -d "$root" ]; then
  { grep -o " $root/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
  rm -rf --one-file-system "$root"
fi
mkdir -p "$work"
say "debootstrap --variant=minbase $suite (packages from the host's mirror) into $root"
debootstrap --variant=minbase --include=make "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log"; die "debootstrap failed (log: $work/debootstrap.log)"; }

# The root's apt sees the same Debian sources as the host (release, updates and security).
if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
  for f in /etc/apt/sources.list.d/*.sources; do
    grep -q "debian-archive-keyring" "$f" && cp "$f" "$root/etc/apt/sources.list.d/"
  done
  [ -n "$(ls "$root/etc/apt/sources.list.d/")" ] && rm -f "$root/etc/apt/sources.list"
fi
# The machine's own trust anchors (a site CA in front of the registries, say) are part of the
# machine, not of the project: they go where Debian's ca-certificates picks them up when the
# project's deps.sh installs it.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/hosts "$root/etc/hosts"
hostname >"$root/etc/hostname"

bind /proc "$root/proc"
bind /sys "$root/sys"
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"

if [ -n "$seed" ]; then
  chroot "$root" apt-get update -qq >"$work/seed.log" 2>&1 || { cat "$work/seed.log"; die "apt-get update failed in the root"; }
  have_seed=()
  for p in $seed; do
    if chroot "$root" apt-cache show "$p" >/dev/null 2>&1; then have_seed+=("$p"); fi
  done
  if ((${#have_seed[@]})); then
    say "seeding the root with what the machine image ships: ${have_seed[*]}"
    chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${have_seed[@]}" >>"$work/seed.log" 2>&1 || { tail -n 30 "$work/seed.log"; die "seeding failed"; }
  fi
fi

# The repository as a clone would have it.
mkdir -p "$root/src/parlops"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -C "$root/src/parlops" -xf -
else
  tar -C "$repo" --exclude=./target --exclude=./build --exclude=./target-mpich -cf - . |
    tar -C "$root/src/parlops" -xf -
fi
# What CI lays beside the repository.
[ -d "$repo/../shared" ] && cp -a "$repo/../shared" "$root/src/shared"

# Rust: the toolchain read-only, the proxies copied, an empty cargo home otherwise.
mkdir -p "$root/root/.cargo/bin"
cp -a "$cargo_bin/." "$root/root/.cargo/bin/"
bind "$rustup_home" "$root/root/.rustup" ro

mkdir -p "$root/dev/shm"
mount -t tmpfs -o size=4g tmpfs "$root/dev/shm"
mounts+=("$root/dev/shm")
mount -t tmpfs tmpfs "$root/tmp"
mounts+=("$root/tmp")

say "running '$steps' in the root (log: $work/run.log)"
set +e
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=dumb LANG=C.UTF-8 \
  PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  RUSTUP_HOME=/root/.rustup CARGO_HOME=/root/.cargo \
  /bin/bash -c "cd /src/parlops && $steps" 2>&1 | tee "$work/run.log" |
  grep --line-buffered -E "^(deps:|make test:|== |header-check|check_spack_recipe:)" | sed -u 's/^/  [root] /' 
rc=${PIPESTATUS[0]}
set -e
took=$(($(date +%s) - start))
if [ "$rc" != 0 ]; then
  tail -n 60 "$work/run.log"
  echo "fresh-check: 0 passed, 1 failed"
  die "'$steps' failed in the clean $suite root after ${took}s (exit $rc; log: $work/run.log)"
fi
cleanup
mounts=()
if [ "${FRESH_KEEP:-1}" = 0 ]; then rm -rf --one-file-system "$root"; fi
echo "fresh-check: 1 passed, 0 failed"
say "'$steps' passed in a clean $suite root built from Debian's packages in ${took}s"
