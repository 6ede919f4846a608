# kiln on Debian bookworm: the project's own install script, then the build; the image runs
# `kiln`. Build from the repository root:
#   docker build -t kiln .
#   docker run --rm -v "$PWD/runs:/runs" kiln train /kiln/configs/examples/fashion_mnist/cnn.yaml --runs-root /runs
FROM debian:bookworm
ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /kiln
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN make build && cp build/kiln /usr/local/bin/kiln
# torchrun-style variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) reach kiln train as
# they are; docs/distributed.md.
ENTRYPOINT ["kiln"]
CMD ["--help"]
