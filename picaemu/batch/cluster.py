"""``picaemu batch --scheduler ADDRESS``: the same tasks on a Dask distributed cluster (the ``[cluster]`` extra).

``run_cluster(tasks, address)`` connects a ``distributed.Client`` to the scheduler at ``address`` (e.g.
``tcp://10.0.0.5:8786``; start one with ``dask scheduler`` and workers with ``dask worker ADDRESS``, each with
picaemu installed), sends every capture as its files' bytes (``picaemu.batch.task.pack``: workers need not share
a filesystem with the client) and yields the result bytes of ``render_task`` in the order tasks complete
(``distributed.as_completed``). Only dicts of strings and bytes travel; emulator objects stay in the worker. A task
the cluster could not run (a worker lost, the scheduler gone) is a failed result naming why. The timeout is the
cooperative one of ``render_task`` (checked after every draw); a cluster worker is not killed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from picaemu.batch.task import FAILED, failed_result, pack, render_task
from picaemu.errors import PicaError

CONNECT_TIMEOUT = "4s"  # a wrong address fails within seconds (distributed retries the connection until then)


class ClusterError(PicaError):
    """The Dask scheduler cannot be reached, or the cluster extra is not installed."""


def client_for(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("--scheduler needs Dask distributed: pip install 'picaemu[cluster]'") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {err}") from None


def run_cluster(tasks: list[dict[str, Any]], address: str) -> Iterator[bytes]:
    """Result bytes of every task, in completion order (see the module docstring)."""
    from distributed import as_completed

    client = client_for(address)
    try:
        futures = {}
        for task in tasks:
            try:
                files = pack(Path(task["source"]))
            except (PicaError, OSError) as err:
                yield failed_result(task, FAILED, str(err))
                continue
            [data] = client.scatter([files], hash=False)
            future = client.submit(render_task, task, data, pure=False, key=f"picaemu-{task['name']}-{id(task)}")
            futures[future] = task
        for future in as_completed(list(futures), loop=client.loop):
            try:
                yield future.result()
            except Exception as err:  # a lost worker, a cancelled task: this capture could not run
                yield failed_result(
                    futures[future], FAILED, f"the cluster could not run it: {type(err).__name__}: {err}"
                )
    finally:
        client.close()
