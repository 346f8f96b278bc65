#!/usr/bin/env bash
# Pack the harness's cache folder ($KSUITE_CACHE_DIR, by default .cache/ksuite) into one tarball that comes
# back from a GPU call, so the next session can unpack it into .cache/ksuite and carry it (README: "Caches").
# Prints each part's size; leaves out the largest compile caches (triton, then inductor, then
# torch_extensions) until the tarball is under LIMIT_MB; baseline_timings (a few KB, and the biggest saving:
# a reused timing compiles nothing) is always kept.
# Usage: scripts/cache_pack.sh OUT_TARBALL [LIMIT_MB (15)]
set -u
dir=${KSUITE_CACHE_DIR:-.cache/ksuite}
out=$1
limit=${2:-15}
if [ ! -d "$dir" ]; then
    echo "cache: $dir does not exist"
    exit 0
fi
echo "cache $dir: $(du -sh "$dir" | cut -f1) in all"
for part in "$dir"/*/; do
    [ -d "$part" ] && echo "  $(du -sh "$part" | cut -f1)	$(basename "$part")"
done
parts=$(cd "$dir" && for p in */; do [ -d "$p" ] && echo "${p%/}"; done)
for drop in "" triton inductor torch_extensions; do
    [ -n "$drop" ] && parts=$(echo "$parts" | grep -vx "$drop")
    [ -n "$parts" ] || break
    # shellcheck disable=SC2086
    tar czf "$out" -C "$dir" $parts
    mib=$(( $(stat -c %s "$out") / 1048576 ))
    if (( mib < limit )); then
        echo "cache packed: $out ($(du -h "$out" | cut -f1): $(echo $parts))"
        exit 0
    fi
    echo "  $(echo $parts) packs to $mib MiB, over $limit: leaving out the next largest"
done
rm -f "$out"
echo "cache: nothing packed under $limit MiB"
