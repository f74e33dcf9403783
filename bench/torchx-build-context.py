"""TorchX's workspace build context for aws_batch, timed: the part of its Docker workspace that runs without
Docker.

`DockerWorkspaceMixin.build_workspace_and_update_role` (torchx/workspace/docker_workspace.py) first calls
`_build_context(role.image, workspace)`, which walks the workspace and writes every file into an uncompressed
tar in a temporary file, on every run (TorchX keeps no cache); only then does it pull the role's image, send
the context to the Docker daemon for a `FROM $IMAGE` + `COPY . .` build, and push the image. This machine has
no Docker daemon, so those steps are not timed: this measures the first step alone, a lower bound of TorchX's
per-run cost.

Run by bench/lib/workspace-run.ts with /usr/bin/python3 and PYTHONPATH=<vendor>/torchx-b72ba03:<vendor>/
docstring_parser (see ../shared/vendor/README.md). Arguments: the workspace directory and the number of
rounds. Prints one JSON line: the milliseconds of each round.
"""

import json
import sys
import time

from torchx.workspace.docker_workspace import _build_context


def main() -> None:
    workspace, rounds = sys.argv[1], int(sys.argv[2])
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        context = _build_context("ghcr.io/pytorch/pytorch:latest", workspace)
        context.close()
        samples.append((time.perf_counter() - start) * 1000)
    print(json.dumps(samples))


if __name__ == "__main__":
    main()
