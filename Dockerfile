# The published image (ghcr.io/<owner>/store-mcp-server): the compiled binary on a
# distroless base (glibc, CA certificates, no shell), running as a non-root user.
#   docker run -i --rm -e STORE_ACCESS_KEY_ID -e STORE_SECRET_ACCESS_KEY -e STORE_REGION -e STORE_ENDPOINT_URL <image>
# The binary handles SIGTERM itself (in-flight calls cleaned up, exit 0), so it can be PID 1.
# Build: podman build -t store-mcp-server . (or docker build); image names are fully qualified, as podman requires.
# test/container/ builds an equivalent image from scratch where no registry is reachable.

FROM docker.io/oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --production
COPY src ./src
COPY view ./view
COPY scripts/lib ./scripts/lib
COPY scripts/build-local.ts ./scripts/build-local.ts
RUN bun scripts/build-local.ts /out/store-mcp-server && /out/store-mcp-server --version

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/store-mcp-server /usr/local/bin/store-mcp-server
USER nonroot:nonroot
# Local paths (upload_file, get_object download) are inside the container: mount a
# directory and allow it, e.g. -v "$PWD/data:/data" -e STORE_ALLOWED_DIRS=/data
WORKDIR /data
# Remote mode: --transport http --listen 0.0.0.0:8787 (with STORE_HTTP_TOKENS or --oauth-issuer).
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/store-mcp-server"]
