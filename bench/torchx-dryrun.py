"""TorchX's submit_dryrun on the AppDefs of bench/dryrun.ts, timed in rounds that bench/dryrun.ts interleaves
with its own.

Run by bench/dryrun.ts with /usr/bin/python3 and PYTHONPATH=<vendor>/torchx-b72ba03:<vendor>/docstring_parser
(see ../shared/vendor/README.md). Prints "ready" once the apps are built and warmed up, then answers each
line "<app name>\t<milliseconds>" on stdin with one JSON line: {"n", "cpuUs", "wallUs"} for as many dry runs
of that app as fit in the time (CPU time is the process's, time.process_time()).

AWSSageMakerScheduler imports the SageMaker Python SDK at module level (`from sagemaker.pytorch import
PyTorch`) but its dry run never uses it (only `schedule` builds the estimator); when the SDK is not
installed, an empty stand-in module is registered so the dry run can be measured.
"""

import json
import sys
import time
import types


def _sagemaker_stand_in() -> None:
    try:
        import sagemaker.pytorch  # noqa: F401
    except ImportError:
        sagemaker = types.ModuleType("sagemaker")
        pytorch = types.ModuleType("sagemaker.pytorch")
        pytorch.PyTorch = object  # only `schedule` would build one
        sagemaker.pytorch = pytorch
        sys.modules["sagemaker"] = sagemaker
        sys.modules["sagemaker.pytorch"] = pytorch


_sagemaker_stand_in()

from torchx.components.dist import ddp  # noqa: E402
from torchx.schedulers.aws_batch_scheduler import create_scheduler as batch_scheduler  # noqa: E402
from torchx.schedulers.aws_sagemaker_scheduler import (  # noqa: E402
    create_scheduler as sagemaker_scheduler,
)
from torchx.specs import AppDef, Resource, Role  # noqa: E402


def five_roles() -> AppDef:
    names = ["reader", "trainer", "evaluator", "ps", "writer"]
    return AppDef(
        name="pipeline",
        roles=[
            Role(
                name=name,
                image="ghcr.io/pytorch/torchx:0.8",
                entrypoint="python",
                args=["-m", f"pipeline.{name}", "--shard", str(i)],
                env={"ROLE": name, "LOGLEVEL": "INFO"},
                num_replicas=i + 1,
                resource=Resource(cpu=4, gpu=8 if i == 1 else 0, memMB=16384),
                max_retries=2,
            )
            for i, name in enumerate(names)
        ],
    )


def sagemaker_app() -> AppDef:
    return AppDef(
        name="train",
        roles=[
            Role(
                name="trainer",
                image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                entrypoint="python",
                args=["train.py", "--epochs", "10", "--lr", "0.01"],
                env={"LOGLEVEL": "INFO"},
                num_replicas=2,
                resource=Resource(
                    cpu=4,
                    gpu=1,
                    memMB=15728,
                    capabilities={"node.kubernetes.io/instance-type": "g5.xlarge"},
                ),
                max_retries=1,
            )
        ],
    )


def main() -> None:
    batch = batch_scheduler("torchx")
    sagemaker = sagemaker_scheduler("torchx")
    batch_cfg = {"queue": "ml-gpu-queue"}
    sagemaker_cfg = {
        "role": "arn:aws:iam::123456789012:role/sm-exec",
        "instance_type": "ml.g5.xlarge",
        "output_path": "s3://my-bucket/out",
    }
    ddp_app = ddp(script="train.py", j="2x8")
    pipeline = five_roles()
    train = sagemaker_app()
    dryruns = {
        "dist.ddp 2x8 (aws_batch)": lambda: batch.submit_dryrun(ddp_app, batch_cfg),
        "5-role AppDef (aws_batch)": lambda: batch.submit_dryrun(pipeline, batch_cfg),
        "1-role AppDef (aws_sagemaker)": lambda: sagemaker.submit_dryrun(train, sagemaker_cfg),
    }
    for fn in dryruns.values():
        for _ in range(200):
            fn()
    print("ready", flush=True)
    for line in sys.stdin:
        name, ms = line.rstrip("\n").split("\t")
        fn = dryruns[name]
        seconds = float(ms) / 1000
        n = 0
        cpu = time.process_time()
        wall = time.perf_counter()
        while time.perf_counter() - wall < seconds:
            for _ in range(20):
                fn()
            n += 20
        wall_us = (time.perf_counter() - wall) * 1e6
        cpu_us = (time.process_time() - cpu) * 1e6
        print(json.dumps({"n": n, "cpuUs": cpu_us, "wallUs": wall_us}), flush=True)


if __name__ == "__main__":
    main()
