#!/usr/bin/env bash
# Run newch's tests inside an emulated Raspberry Pi OS stand-in: a Debian bookworm root of the asked
# architecture, built with mmdebstrap and run through qemu-user (binfmt_misc).
#
#   tools/pi.sh ARCH [--hash] [PYTEST ARGS...]
#     ARCH    arm64 (64-bit Pi OS: numpy + numba wheels from PyPI, the JIT backend)
#             armhf (32-bit Pi OS: Debian's python3-numpy 1.24, no numba, the ref backend)
#     --hash  after the tests, print the fixed workload's hash (tools/result_hash.py)
#
# Needs root, binfmt_misc, the Debian mirror and pip on the host's python3 (wheels for the Pi are
# downloaded on the host, then installed offline inside). In CI (CI=true) a missing piece is a failure;
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
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, chroot and mounts); run with sudo"
if ! command -v mmdebstrap >/dev/null || ! command -v "$qemu-static" >/dev/null \
        || ! command -v update-binfmts >/dev/null || ! command -v arch-test >/dev/null; then
    command -v apt-get >/dev/null || skip "mmdebstrap/$qemu-static missing and no apt-get to install them"
    # NOTE: arch-test is only a recommendation of mmdebstrap, but without it mmdebstrap refuses
    # a foreign architecture ("install arch-test for foreign architecture support")
    echo "pi.sh: installing qemu-user-static binfmt-support mmdebstrap arch-test"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        qemu-user-static binfmt-support mmdebstrap arch-test; } >/dev/null \
        || skip "apt-get could not install qemu-user-static binfmt-support mmdebstrap arch-test"
fi
python3 -m pip --version >/dev/null 2>&1 || skip "the host's python3 has no pip (wheels are fetched on the host)"
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
    phase "root build (mmdebstrap $arch $suite from $mirror)"
    # The 'essential' variant plus python3 and libgomp1: the host's apt resolves and downloads
    # (pipelined), only dpkg and the maintainer scripts run under emulation. No apt, pip,
    # python3-venv or certificates inside: pip and the wheels come from the host (below).
    pkgs=python3,libgomp1,libstdc++6   # libstdc++: numpy and llvmlite wheels link it
    [ "$arch" = armhf ] && pkgs="$pkgs,python3-numpy"
    # a build killed half way may leave mmdebstrap's mounts in root.tmp: unmount before deleting
    { findmnt -rn -o TARGET | grep -F "$root.tmp/" | sort -r | while read -r m; do umount -l "$m"; done; } || true
    rm -rf "$root.tmp"; mkdir -p "$cache"
    # merged /usr through the hook (as debootstrap does) keeps usrmerge and perl out;
    # force-unsafe-io: no fsync per file, the root is rebuilt whole if anything fails.
    mmdebstrap --mode=root --variant=essential --architectures="$arch" --include="$pkgs" \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --dpkgopt=force-unsafe-io \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        "$suite" "$root.tmp" "$mirror" > "$cache/mmdebstrap-$arch.log" 2>&1 \
        || { tail -n 20 "$cache/mmdebstrap-$arch.log" >&2; echo "pi.sh: mmdebstrap failed" >&2; exit 1; }
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

phase "wheels (fetched on the host)"
# pip's downloads and newch's wheel build run natively; inside, pip only unpacks offline.
wh="$root/opt/newch-wheels"; mkdir -p "$wh"; rm -f "$wh"/newch-*.whl
case "$arch" in
    arm64) plat=(--platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64) ;;
    armhf) plat=(--platform manylinux_2_17_armv7l --platform manylinux2014_armv7l --platform linux_armv7l) ;;
esac
{ python3 -m pip wheel -q --no-deps --no-build-isolation -w "$wh" "$root/opt/newch-src" 2>/dev/null \
    || python3 -m pip wheel -q --no-deps -w "$wh" "$root/opt/newch-src"; } >/dev/null
whl=$(ls "$wh"/newch-*.whl)
# newch's requirements from its wheel: the test extra, plus (arm64) numpy/numba/llvmlite;
# armhf keeps Debian's numpy and gets no numba (pip inside checks the markers say so).
mapfile -t reqs < <(python3 - "$whl" "$arch" <<'EOF'
import sys, zipfile
whl, arch = sys.argv[1:]
z = zipfile.ZipFile(whl)
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
for line in z.read(meta).decode().splitlines():
    if line.startswith("Requires-Dist:"):
        req, _, marker = line[len("Requires-Dist:"):].partition(";")
        extra = "extra ==" in marker
        if (extra and "test" in marker) or (not extra and arch == "arm64"):
            print(req.strip())
print("pip")   # run from its wheel inside (Debian's own pip would bring certificates and more)
EOF
)
python3 -m pip download -q --dest "$wh" --only-binary=:all: "${plat[@]}" --python-version 3.11 \
    --implementation cp --abi cp311 "${reqs[@]}" > "$cache/pip-download-$arch.log" 2>&1 \
    || { grep -v '^WARNING: Location' "$cache/pip-download-$arch.log" | tail -n 20 >&2
         echo "pi.sh: pip download of ${reqs[*]} for $arch failed" >&2; exit 1; }
echo "pi.sh: [$arch] wheels: $(cd "$wh" && ls | tr '\n' ' ')"

phase "install newch into the root's venv"
# No pip inside the venv: pip runs from its wheel's zip, offline, without byte-compiling
# (modules compile on first import, only those imported).
site=""; [ "$arch" = armhf ] && site="--system-site-packages"
inroot "set -e
    pipw=\$(ls /opt/newch-wheels/pip-*.whl | head -n 1)
    pip() { python \$pipw/pip \"\$@\"; }
    if [ -e /opt/newch-venv/.newch-deps-ok ]; then   # a later run: only newch changes
        pip install -q --no-index --no-compile --no-deps --force-reinstall /opt/newch-wheels/newch-*.whl
    else
        rm -rf /opt/newch-venv; python3 -m venv --without-pip $site /opt/newch-venv
        pip install -q --no-index --find-links /opt/newch-wheels --no-compile 'newch[test]'
        touch /opt/newch-venv/.newch-deps-ok
    fi
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
