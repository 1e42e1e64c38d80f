#!/usr/bin/env bash
# Renders every icon from icons/portcullis.svg (the one source image) with rsvg-convert:
#   app icons   32x32.png, 128x128.png, 128x128@2x.png, icon.png (512)
#   tray states tray-idle.png, tray-paused.png, tray-attention.png (no count),
#               tray-attention-1.png … tray-attention-9.png, tray-attention-9plus.png
# The tray states are the source with a badge drawn over it (replacing the BADGE comment).
# Run it after changing the SVG; the PNGs are committed so builds need no renderer.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$dir/portcullis.svg"
command -v rsvg-convert >/dev/null || { echo "needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }

render() { # size out [svg text on stdin]
    rsvg-convert -w "$1" -h "$1" -o "$dir/$2"
}

for size in 32 128; do render "$size" "${size}x${size}.png" <"$src"; done
render 256 128x128@2x.png <"$src"
render 512 icon.png <"$src"

badge() { # out svg-fragment
    sed "s|<!-- BADGE -->|$2|" "$src" | render 64 "$1"
}

circle='<circle cx="390" cy="390" r="118" fill="COLOR" stroke="#1f2937" stroke-width="20"/>'
text() { # label font-size
    printf '<text x="390" y="390" dy="0.36em" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold" font-size="%s" fill="#ffffff">%s</text>' "$2" "$1"
}

badge tray-idle.png ''
badge tray-paused.png "${circle/COLOR/#6b7280}<rect x=\"340\" y=\"330\" width=\"34\" height=\"120\" rx=\"6\" fill=\"#ffffff\"/><rect x=\"406\" y=\"330\" width=\"34\" height=\"120\" rx=\"6\" fill=\"#ffffff\"/>"
badge tray-attention.png "${circle/COLOR/#dc2626}$(text '!' 180)"
for n in 1 2 3 4 5 6 7 8 9; do
    badge "tray-attention-$n.png" "${circle/COLOR/#dc2626}$(text "$n" 180)"
done
badge tray-attention-9plus.png "${circle/COLOR/#dc2626}$(text '9+' 130)"
echo "icons rendered in $dir" >&2
