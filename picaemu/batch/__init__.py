"""Batch replay for CI (``picaemu batch``): the work of one capture as plain data (``task``), local worker
processes with per-capture timeouts (``local``), a Dask cluster (``cluster``) and the reports (``report``). The
command itself, with naming, comparison and exit status, is ``picaemu.cli.batch``."""
