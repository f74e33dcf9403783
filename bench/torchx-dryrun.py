"""TorchX's AWSBatchScheduler.submit_dryrun on the AppDefs of bench/dryrun.ts, timed in one thread.

Run by bench/dryrun.ts with /usr/bin/python3 and PYTHONPATH=<vendor>/torchx-b72ba03:<vendor>/docstring_parser
(see ../shared/vendor/README.md). Prints one JSON object: app name -> {"perSecond", "usPerOp"}.
"""

import json
import sys
import time

from torchx.components.dist import ddp
from torchx.schedulers.aws_batch_scheduler import create_scheduler
from torchx.specs import AppDef, Resource, Role


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


def rate(fn, seconds: float) -> dict:
    for _ in range(200):
        fn()
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(50):
            fn()
        n += 50
    elapsed = time.perf_counter() - start
    return {"perSecond": round(n / elapsed), "usPerOp": round(elapsed * 1e6 / n, 1)}


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    scheduler = create_scheduler("torchx")
    cfg = {"queue": "ml-gpu-queue"}
    apps = {
        "dist.ddp 2x8 (aws_batch)": ddp(script="train.py", j="2x8"),
        "5-role AppDef (aws_batch)": five_roles(),
    }
    out = {name: rate(lambda app=app: scheduler.submit_dryrun(app, cfg), seconds) for name, app in apps.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
