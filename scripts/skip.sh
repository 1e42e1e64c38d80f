# shellcheck shell=bash
# What a test script does when part of it cannot run here (sourced).
#
# cannot_run REASON: under CI=true the run fails, naming what is missing: a green CI means every
# step ran. Elsewhere (a developer's machine without Wine, say) it prints SKIPPED and the reason,
# and adds the reason to $PORTCULLIS_SKIPS, which scripts/test.sh shows in its step table. It
# returns; the caller decides whether the rest of the script can still run.
cannot_run() {
    if [[ ${CI:-} == true ]]; then
        printf 'FAILED: this cannot run here, and CI=true does not skip it: %s\n' "$*" >&2
        exit 1
    fi
    printf 'SKIPPED: %s\n' "$*"
    if [[ -n ${PORTCULLIS_SKIPS:-} ]]; then printf '%s\n' "$*" >>"$PORTCULLIS_SKIPS"; fi
}
