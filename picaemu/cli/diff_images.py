"""``picaemu diff-images REF_DIR OUT_DIR [--threshold T] [--diff-dir DIR] [--json]``: compare two folders of
pictures (apitrace's diff-images), matched by relative path (``picaemu.analysis.imagediff``). One row per picture on
stdout: status, largest channel difference, bad pixels, PSNR. Exit status 0 when every picture matches, 1 when
any differs or is missing on one side, 2 for bad arguments or an unreadable picture."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from picaemu.analysis.imagediff import compare_directories
from picaemu.cli.common import info, print_table, quiet_option, reports_errors

EXAMPLES = """
Examples:

\b
  picaemu batch samples/captures -o out
  picaemu diff-images samples/reference out --threshold 2
  picaemu diff-images samples/reference out --threshold 0 --diff-dir diffs --json
"""


def check_rows(checks: list) -> list[dict]:
    """Table rows of ``FrameCheck``s: picture, status, max diff, bad pixels, PSNR (dB; inf when equal)."""
    return [
        {
            "picture": c.key,
            "status": c.status,
            "max diff": "" if c.max_diff is None else c.max_diff,
            "bad pixels": "" if c.bad_pixels is None else c.bad_pixels,
            "psnr": "" if c.max_diff is None else ("inf" if c.psnr is None else c.psnr),
            "note": c.error,
        }
        for c in checks
    ]


@click.command("diff-images", epilog=EXAMPLES)
@click.argument("ref_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--threshold",
    type=click.IntRange(0, 255),
    default=0,
    show_default=True,
    help="Largest allowed per-channel difference (0-255).",
)
@click.option(
    "--diff-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write a diff picture (<picture>.diff.png) here for every picture that differs.",
)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout instead of the table.")
@quiet_option
@reports_errors
def diff_images(ref_dir: Path, out_dir: Path, threshold: int, diff_dir: Path | None, as_json: bool) -> None:
    """Compare every picture under OUT_DIR with the one at the same path under REF_DIR."""
    checks = compare_directories(ref_dir, out_dir, threshold, diff_dir)
    if not checks:
        raise click.UsageError(f"no .png pictures under {ref_dir} or {out_dir}")
    if as_json:
        click.echo(json.dumps({"threshold": threshold, "pictures": [asdict(c) for c in checks]}, indent=1))
    else:
        print_table(check_rows(checks))
    failed = [c for c in checks if not c.passed]
    info(f"{len(checks)} pictures, {len(failed)} differ or are missing (threshold {threshold})")
    if failed:
        raise SystemExit(1)
