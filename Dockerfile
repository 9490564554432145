# syntax=docker/dockerfile:1
# ipintel container: the single binary, the default index built at image
# build time, and the default data (so the container can rebuild its index).
# The data comes from `bun install --frozen-lockfile` at image build time, which
# checks the same bun.lock integrity the binary's own fetch does: a container
# then starts, and rebuilds on a fresh volume, with no registry access. Without
# /opt/ipintel/data the binary would fetch it as on a bare host (README, Single binary).
# The build commands live in tools/docker-build-steps.sh (one step per RUN,
# in the order `sh tools/docker-build-steps.sh steps` prints; a test checks it).
#   docker build -t ipintel .
#   docker run -p 8080:8080 -v ipintel-data:/var/lib/ipintel ipintel

ARG BUN_VERSION=1.4

FROM oven/bun:${BUN_VERSION} AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml ./
COPY tools/docker-build-steps.sh tools/docker-build-steps.sh
RUN sh tools/docker-build-steps.sh install
COPY tsconfig.json ./
COPY src src
COPY index-builder index-builder
COPY tools tools
COPY drizzle drizzle
COPY feeds feeds
RUN sh tools/docker-build-steps.sh compile
RUN sh tools/docker-build-steps.sh index
RUN sh tools/docker-build-steps.sh stage /stage

FROM debian:bookworm-slim AS runtime
# xdelta3: a pulling server applies the publisher's deltas with it, a publisher makes them (docs/deployment.md,
# "Cheaper pulls"); without it both use full files.
RUN apt-get update \
 && apt-get install -y --no-install-recommends xdelta3 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 ipintel \
 && useradd --system --uid 10001 --gid ipintel --home-dir /var/lib/ipintel --shell /usr/sbin/nologin ipintel \
 && mkdir -p /var/lib/ipintel \
 && chown ipintel:ipintel /var/lib/ipintel
COPY --from=build /stage/ipintel /usr/local/bin/ipintel
COPY --from=build /stage/data /opt/ipintel/data
COPY --from=build --chown=ipintel:ipintel /stage/ipintel.idx /var/lib/ipintel/ipintel.idx
# MIMALLOC_PURGE_DELAY=-1: Bun's allocator keeps the memory it freed for its own next
# allocations instead of returning it to the OS after 10 ms (docs/http.md, Performance notes).
# IPINTEL_WORKERS (unset here) defaults to the CPUs the container may run on, which
# a --cpus quota does not change: with `docker run --cpus N` pass -e IPINTEL_WORKERS=N
# (docs/deployment.md, Workers).
ENV PORT=8080 \
    HOST=0.0.0.0 \
    MIMALLOC_PURGE_DELAY=-1 \
    IPINTEL_INDEX=/var/lib/ipintel/ipintel.idx \
    IPINTEL_DB=/var/lib/ipintel/ipintel.sqlite \
    IPINTEL_FEEDS_DIR=/var/lib/ipintel/feeds \
    IPINTEL_DATA_DIR=/opt/ipintel/data
USER ipintel
WORKDIR /var/lib/ipintel
VOLUME /var/lib/ipintel
EXPOSE 8080
# A fresh, empty volume makes `serve` build the index first (1-2 minutes): start-period covers it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 CMD ["ipintel", "healthcheck"]
ENTRYPOINT ["ipintel"]
CMD ["serve"]
