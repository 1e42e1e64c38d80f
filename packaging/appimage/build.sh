#!/usr/bin/env bash
# Assembles the AppImage (called by scripts/package.sh, which explains the format):
#
#   build.sh RUNTIME DEB_DATA OUT.AppImage
#
# RUNTIME is the built packaging/appimage-runtime binary; DEB_DATA the .deb bundle's data/ dir
# (usr/bin/portcullis-desktop, usr/bin/portcullis, usr/share/applications/*.desktop, the
# hicolor icons). The AppDir gets those, this directory's AppRun, the desktop entry and the
# icon at its top (where AppImage tools look) and .DirIcon; mksquashfs packs it (gzip: the
# runtime reads it in pure Rust); the runtime, marked "AI\x02" at offset 8 of its ELF header
# (AppImage type 2), goes in front. OUT is replaced only once it is complete.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { printf 'appimage: %s\n' "$*" >&2; exit 1; }

(($# == 3)) || fail "usage: build.sh RUNTIME DEB_DATA OUT.AppImage"
runtime=$1 data=$2 out=$3
[[ -x $runtime ]] || fail "no runtime at $runtime"
for f in usr/bin/portcullis-desktop usr/bin/portcullis; do
    [[ -x $data/$f ]] || fail "$data has no $f: is it a .deb bundle's data dir?"
done
command -v mksquashfs >/dev/null || fail "mksquashfs is missing (Debian package squashfs-tools)"

mkdir -p "$(dirname "$out")"
work="$(mktemp -d "$(dirname "$out")/.appimage.XXXXXX")"
trap 'rm -rf "$work"' EXIT
appdir="$work/Portcullis.AppDir"
mkdir "$appdir"
cp -a "$data/usr" "$appdir/"
install -m 755 "$here/AppRun" "$appdir/AppRun"

entries=("$appdir"/usr/share/applications/*.desktop)
if ((${#entries[@]} != 1)) || [[ ! -f ${entries[0]} ]]; then fail "want one desktop entry in $data/usr/share/applications"; fi
cp "${entries[0]}" "$appdir/"
icon="$(sed -n 's/^Icon=//p' "${entries[0]}")"
[[ -n $icon ]] || fail "${entries[0]} names no Icon"
for size in 256x256@2 256x256 512x512 128x128; do
    png="$appdir/usr/share/icons/hicolor/$size/apps/$icon.png"
    if [[ -f $png ]]; then
        cp "$png" "$appdir/$icon.png"
        break
    fi
done
[[ -f $appdir/$icon.png ]] || fail "no 128 px or larger icon $icon.png in $data/usr/share/icons/hicolor"
ln -s "$icon.png" "$appdir/.DirIcon"

mksquashfs "$appdir" "$work/image.squashfs" -comp gzip -all-root -noappend -quiet -no-progress
cp "$runtime" "$work/runtime"
printf 'AI\002' | dd of="$work/runtime" bs=1 seek=8 conv=notrunc status=none
cat "$work/runtime" "$work/image.squashfs" >"$work/out.AppImage"
chmod 755 "$work/out.AppImage"
mv -f "$work/out.AppImage" "$out"
printf 'appimage: %s: %s bytes (runtime %s, squashfs of a %s AppDir %s)\n' "$out" "$(stat -c %s "$out")" \
    "$(stat -c %s "$runtime")" "$(du -sh --apparent-size "$appdir" | cut -f1)" "$(stat -c %s "$work/image.squashfs")"
