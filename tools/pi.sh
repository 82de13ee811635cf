#!/usr/bin/env bash
# Run newch's tests inside an emulated Raspberry Pi OS stand-in: a Debian bookworm root of the asked
# architecture, built with debootstrap and run through qemu-user (binfmt_misc).
#
#   tools/pi.sh ARCH [--hash] [PYTEST ARGS...]
#     ARCH    arm64 (64-bit Pi OS: numpy + numba wheels from PyPI, the JIT backend)
#             armhf (32-bit Pi OS: Debian's python3-numpy 1.24, no numba, the ref backend)
#     --hash  after the tests, print the fixed workload's hash (tools/result_hash.py)
#
# Needs root, binfmt_misc and the Debian mirror. In CI (CI=true) a missing piece is a failure;
# by hand the script says why and exits 0 (a skip). The root is built once under
# $NEWCH_PI_CACHE (default /var/cache/newch-pi) and reused; each run copies the checkout in,
# reinstalls newch into the root's venv and runs with an empty NUMBA_CACHE_DIR.
# Guide: docs/pi.md.
set -euo pipefail

arch="${1:-}"
[ $# -gt 0 ] && shift
case "$arch" in
    arm64) qemu=qemu-aarch64 ;;
    armhf) qemu=qemu-arm ;;
    *) echo "usage: tools/pi.sh arm64|armhf [--hash] [pytest args...]" >&2; exit 2 ;;
esac
want_hash=0
if [ "${1:-}" = "--hash" ]; then want_hash=1; shift; fi

src="$(cd "$(dirname "$0")/.." && pwd)"
cache="${NEWCH_PI_CACHE:-/var/cache/newch-pi}"
root="$cache/$arch"
suite=bookworm

t_phase=$(date +%s); phase_name=""
phase() {   # phase NAME: print how long the previous phase took, start NAME
    local now; now=$(date +%s)
    [ -n "$phase_name" ] && echo "pi.sh: [$arch] phase '$phase_name' took $((now - t_phase)) s"
    phase_name="$1"; t_phase=$now
    [ -n "$1" ] && echo "pi.sh: [$arch] phase '$1'..."
    return 0
}
skip() {    # a missing prerequisite: fatal in CI, a skip by hand
    if [ "${CI:-}" = "true" ]; then echo "pi.sh: FAIL ($arch): $*" >&2; exit 1; fi
    echo "pi.sh: skipped ($arch): $*"; exit 0
}

mirror_url() {   # the Debian mirror the host's apt uses (NEWCH_PI_MIRROR overrides)
    if [ -n "${NEWCH_PI_MIRROR:-}" ]; then echo "$NEWCH_PI_MIRROR"; return; fi
    local u
    u=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' \
        | grep -v security | head -n1 || true)
    [ -z "$u" ] && u=$(grep -hs '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' \
        | grep -v security | head -n1 || true)
    echo "${u:-http://deb.debian.org/debian}"
}

# ---- prerequisites -------------------------------------------------------------------------
phase "checks"
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot and mounts); run with sudo"
if ! command -v debootstrap >/dev/null || ! command -v "$qemu-static" >/dev/null; then
    command -v apt-get >/dev/null || skip "debootstrap/$qemu-static missing and no apt-get to install them"
    echo "pi.sh: installing qemu-user-static binfmt-support debootstrap"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        qemu-user-static binfmt-support debootstrap; } >/dev/null \
        || skip "apt-get could not install qemu-user-static binfmt-support debootstrap"
fi
bf=/proc/sys/fs/binfmt_misc
[ -e "$bf/status" ] || mount -t binfmt_misc binfmt_misc "$bf" 2>/dev/null \
    || skip "binfmt_misc is not mounted and cannot be mounted (a container without it?)"
if [ ! -e "$bf/$qemu" ]; then
    update-binfmts --enable "$qemu" >/dev/null 2>&1 || true
    [ -e "$bf/$qemu" ] || skip "binfmt_misc has no $qemu entry (update-binfmts --enable $qemu failed)"
fi
mirror=$(mirror_url)
if [ ! -e "$root/.newch-root-ok" ]; then
    python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=30)" \
        "$mirror/dists/$suite/Release" 2>/dev/null || skip "Debian mirror $mirror unreachable"
fi

# ---- the root, built once --------------------------------------------------------------------
mounted=()
cleanup() {
    local i
    for ((i=${#mounted[@]}-1; i>=0; i--)); do
        umount -R "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true
    done
}
trap cleanup EXIT INT TERM

if [ ! -e "$root/.newch-root-ok" ]; then
    phase "root build (debootstrap $arch $suite from $mirror)"
    pkgs=python3,python3-venv,python3-pip,ca-certificates,libgomp1
    [ "$arch" = armhf ] && pkgs="$pkgs,python3-numpy"
    rm -rf "$root.tmp"; mkdir -p "$cache"
    debootstrap --arch="$arch" --variant=minbase --include="$pkgs" "$suite" "$root.tmp" "$mirror" \
        > "$cache/debootstrap-$arch.log" 2>&1 \
        || { tail -n 20 "$cache/debootstrap-$arch.log" >&2; echo "pi.sh: debootstrap failed" >&2; exit 1; }
    rm -rf "$root"; mv "$root.tmp" "$root"; touch "$root/.newch-root-ok"
fi

# ---- into the root: network, certificates, pip config, mounts, the checkout ----------------------
phase "prepare"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [ -e "$ca" ]; then cp -L "$ca" "$root/etc/newch-host-ca.crt"; break; fi
done
[ -e /etc/pip.conf ] && cp -L /etc/pip.conf "$root/etc/pip.conf"
[ -d /etc/xdg/pip ] && { mkdir -p "$root/etc/xdg"; rm -rf "$root/etc/xdg/pip"; cp -rL /etc/xdg/pip "$root/etc/xdg/pip"; }
for m in proc sys dev; do
    mkdir -p "$root/$m"
    case $m in
        proc) mount -t proc proc "$root/proc" ;;
        sys) mount -t sysfs sysfs "$root/sys" ;;
        dev) mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev" ;;
    esac
    mounted+=("$root/$m")
done
rm -rf "$root/opt/newch-src"; mkdir -p "$root/opt/newch-src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard \
        | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$root/opt/newch-src"
else
    tar -C "$src" --exclude=.git -cf - . | tar -xf - -C "$root/opt/newch-src"
fi

# Environment inside: host CAs for pip/ssl, the host's pip index settings (file:// ones stay out).
envs=(HOME=/root PATH=/opt/newch-venv/bin:/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
      PIP_CERT=/etc/newch-host-ca.crt SSL_CERT_FILE=/etc/newch-host-ca.crt
      REQUESTS_CA_BUNDLE=/etc/newch-host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1
      PIP_DEFAULT_TIMEOUT=180 NUMBA_CACHE_DIR=/tmp/newch-numba-cache CI="${CI:-}")
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST http_proxy https_proxy no_proxy \
         HTTP_PROXY HTTPS_PROXY NO_PROXY NEWCH_MEMORY_LIMIT NUMBA_NUM_THREADS; do
    val="${!v:-}"
    [ -n "$val" ] && [[ "$val" != file:* ]] && envs+=("$v=$val")
done
inroot() { chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/bash -c "$1"; }

phase "install newch into the root's venv"
site=""; [ "$arch" = armhf ] && site="--system-site-packages"
inroot "set -e
    if [ ! -x /opt/newch-venv/bin/python ]; then
        python3 -m venv $site /opt/newch-venv
        pip install -q 'setuptools>=64' wheel
    fi
    pip install -q --no-build-isolation '/opt/newch-src[test]'
    cd /tmp && python -c 'import newch' "

phase "backend"
inroot "set -e; rm -rf /tmp/newch-numba-cache; mkdir -p /tmp/newch-numba-cache; cd /tmp
python - <<'EOF'
import platform, sys, numpy
print('pi.sh: python', sys.version.split()[0], platform.machine(), 'numpy', numpy.__version__)
try:
    import numba
    @numba.njit(parallel=True)
    def _probe(a):
        for i in numba.prange(a.shape[0]):
            a[i] = i
    _probe(numpy.zeros(64))
    print('pi.sh: numba', numba.__version__, 'threading_layer', numba.threading_layer())
except ImportError:
    print('pi.sh: numba not installed')
import newch
print('pi.sh: ctx.backend', newch.Context().backend)
EOF"

phase "pytest $*"
rc=0
inroot "cd /opt/newch-src && python -m pytest -p no:cacheprovider $(printf '%q ' "$@")" || rc=$?
if [ "$want_hash" = 1 ] && [ "$rc" = 0 ]; then
    phase "result hash"
    inroot "cd /opt/newch-src && python tools/result_hash.py --verbose" || rc=$?
fi
phase ""
exit "$rc"
